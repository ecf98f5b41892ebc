package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/server"
)

// Trip is the state of the examples' workflow.
type Trip struct {
	City    string `json:"city"`
	Days    int    `json:"days"`
	Plan    string `json:"plan,omitempty"`
	Budget  string `json:"budget,omitempty"`
	Booking string `json:"booking,omitempty"`
}

// Itinerary is what the LLM returns for the plan task.
type Itinerary struct {
	Plan string `json:"plan" jsonschema:"a day-by-day plan"`
}

func tripGraph() *magen.Graph[Trip] {
	return magen.NewGraph[Trip]().
		AddNode("plan", func(ctx context.Context, t Trip) (Trip, error) {
			out, err := magen.Ask[Itinerary](ctx, magen.Guidance{
				Task:    fmt.Sprintf("Plan %d days in %s.", t.Days, t.City),
				Example: Itinerary{Plan: "Day 1: old town. Day 2: museums."},
			})
			if err != nil {
				return t, err // the interrupt: the graph pauses here
			}
			t.Plan = out.Plan
			return t, nil
		}).
		AddNode("book", func(ctx context.Context, t Trip) (Trip, error) {
			t.Booking = "HOTEL-" + strings.ToUpper(t.City[:3])
			return t, nil
		}).
		AddEdge(magen.Start, "plan").
		AddEdge("plan", "book").
		AddEdge("book", magen.End)
}

// fixedIDs makes thread ids deterministic, for examples and tests only.
// Examples that use it also keep checkpoints in memory, so that their
// "thread-1" never meets another's in a shared store.
func fixedIDs() magen.Option {
	n := 0
	return magen.WithIDSource(func() string { n++; return fmt.Sprintf("thread-%d", n) })
}

// The whole happy path: start a workflow, answer the LLM's task, and read
// the final state. Run drives the same core as the MCP tool.
func Example() {
	orch, err := magen.New(tripGraph(), magen.WithToolID("trips"), fixedIDs(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	// The first call starts a thread; the plan node asks the LLM.
	r, err := orch.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"city":"Lisbon","days":2}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Status, r.Task.NodeID, r.StateData)

	// The LLM answers with userInput and the workflowStateData it was given.
	r, err = orch.Run(ctx, magen.Input{
		UserInput: json.RawMessage(`{"plan":"Day 1: Alfama. Day 2: Belém."}`),
		StateData: r.StateData,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Status)

	trip, _, _ := orch.State(ctx, r.StateData.ThreadID)
	fmt.Printf("%+v\n", trip)
	// Output:
	// awaiting_result plan {thread-1 1}
	// completed
	// {City:Lisbon Days:2 Plan:Day 1: Alfama. Day 2: Belém. Budget: Booking:HOTEL-LIS}
}

// New checks the graph and every option at once and reports all problems.
func ExampleNew() {
	g := magen.NewGraph[Trip]().
		AddNode("plan", func(ctx context.Context, t Trip) (Trip, error) { return t, nil }).
		AddEdge("plan", magen.End) // forgot the entry edge

	_, err := magen.New(g, magen.WithToolID("trip planner"), magen.WithStepLimit(0))
	fmt.Println(errors.Is(err, magen.ErrInvalidGraph), errors.Is(err, magen.ErrInvalidOption))
	fmt.Println(err)
	// Output:
	// true true
	// magen: invalid option: WithToolID("trip planner"): want 1 to 64 letters, digits, '_', '-' or '.'
	// magen: invalid option: WithStepLimit(0): want at least 1
	// node "__start__": magen: invalid graph: has no edge: add one with AddEdge(magen.Start, first)
	// node "plan": magen: invalid graph: cannot be reached from Start
}

// Register adds the orchestrator to an MCP server as one tool.
func ExampleOrchestrator_Register() {
	orch, err := magen.New(tripGraph(), magen.WithToolID("trips"), magen.WithTitle("Trip planner"))
	if err != nil {
		panic(err)
	}
	s := server.NewMCPServer("trip-server", "1.0.0", server.WithToolCapabilities(false))
	orch.Register(s)
	// server.ServeStdio(s) would now serve it to Claude Desktop or any MCP client.
	fmt.Println(orch.Tool().Name, orch.Tool().Annotations.Title)
	// Output:
	// trips Trip planner
}

// A routed edge picks the next node from the state. Its outcomes label the
// edges of the Mermaid drawing.
func ExampleGraph_AddRoute() {
	g := magen.NewGraph[Trip]().
		AddNode("check budget", func(ctx context.Context, t Trip) (Trip, error) {
			t.Budget = map[bool]string{true: "high", false: "low"}[t.Days > 5]
			return t, nil
		}).
		AddNode("splurge", func(ctx context.Context, t Trip) (Trip, error) { t.Booking = "palace"; return t, nil }).
		AddNode("save", func(ctx context.Context, t Trip) (Trip, error) { t.Booking = "hostel"; return t, nil }).
		AddEdge(magen.Start, "check budget").
		AddRoute("check budget", func(t Trip) string { return t.Budget },
			magen.Routes{"high": "splurge", "low": "save"}).
		AddEdge("splurge", magen.End).
		AddEdge("save", magen.End)

	orch, err := magen.New(g, fixedIDs(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()))
	if err != nil {
		panic(err)
	}
	r, _ := orch.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"city":"Oslo","days":3}`)})
	trip, _, _ := orch.State(context.Background(), r.StateData.ThreadID)
	fmt.Println(r.Status, trip.Booking)
	fmt.Print(g.Mermaid())
	// Output:
	// completed hostel
	// flowchart TD
	//     start([start])
	//     n0["check budget"]
	//     n1["splurge"]
	//     n2["save"]
	//     stop([end])
	//     start --> n0
	//     n0 -. "high" .-> n1
	//     n0 -. "low" .-> n2
	//     n1 --> stop
	//     n2 --> stop
}

// Ask pauses the graph and returns an *InterruptError; on resume the node
// runs again from its start, and Ask returns the LLM's answer.
func ExampleAsk() {
	type Answer struct {
		Capital string `json:"capital" jsonschema:"the capital city"`
	}
	runs := 0
	g := magen.NewGraph[Trip]().
		AddNode("capital", func(ctx context.Context, t Trip) (Trip, error) {
			runs++
			a, err := magen.Ask[Answer](ctx, magen.Guidance{Task: "What is the capital of Portugal?"})
			var ie *magen.InterruptError
			if errors.As(err, &ie) {
				fmt.Printf("run %d: waiting for the LLM (task %d of node %q)\n", runs, ie.Task.Index, ie.Task.NodeID)
				return t, err
			}
			if err != nil {
				return t, err
			}
			fmt.Printf("run %d: the LLM says %s\n", runs, a.Capital)
			t.City = a.Capital
			return t, nil
		}).
		AddEdge(magen.Start, "capital").
		AddEdge("capital", magen.End)

	orch, _ := magen.New(g, fixedIDs(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()))
	ctx := context.Background()
	r, _ := orch.Run(ctx, magen.Input{})
	fmt.Println(string(r.Task.ResultSchema))
	r, _ = orch.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"capital":"Lisbon"}`), StateData: r.StateData})
	fmt.Println(r.Status)
	// Output:
	// run 1: waiting for the LLM (task 0 of node "capital")
	// {"type":"object","properties":{"capital":{"type":"string","description":"the capital city"}},"required":["capital"],"additionalProperties":false}
	// run 2: the LLM says Lisbon
	// completed
}

// terse replaces only the completion message and keeps the other default
// prompts, by embedding DefaultPrompts.
type terse struct{ magen.DefaultPrompts }

func (terse) Completed(p magen.PromptContext) string {
	return fmt.Sprintf("Done: %s is finished (thread %s).", p.Title, p.StateData.ThreadID)
}

// A custom PromptBuilder changes what the LLM reads.
func ExamplePromptBuilder() {
	g := magen.NewGraph[Trip]().
		AddNode("noop", func(ctx context.Context, t Trip) (Trip, error) { return t, nil }).
		AddEdge(magen.Start, "noop").AddEdge("noop", magen.End)
	orch, _ := magen.New(g, magen.WithTitle("Trip planner"), magen.WithPromptBuilder(terse{}), fixedIDs(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()))
	r, _ := orch.Run(context.Background(), magen.Input{})
	fmt.Println(r.Prompt)
	// Output:
	// Done: Trip planner is finished (thread thread-1).
}

// WithClock and WithIDSource make checkpoints deterministic in tests.
func ExampleWithClock() {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	orch, _ := magen.New(tripGraph(), magen.WithClock(func() time.Time { return at }), fixedIDs(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()))
	r, _ := orch.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"city":"Rome","days":1}`)})
	cp, _ := orch.Checkpointer().Load(context.Background(), r.StateData.ThreadID)
	fmt.Println(cp.ThreadID, cp.Seq, cp.Time.Format(time.RFC3339), cp.Status, cp.Next)
	// Output:
	// thread-1 1 2026-01-02T03:04:05Z awaiting_result [plan]
}
