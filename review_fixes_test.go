package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// mustNew builds an orchestrator that is closed when the test ends.
func mustNew[S any](t *testing.T, g *magen.Graph[S], opts ...magen.Option) *magen.Orchestrator[S] {
	t.Helper()
	o, err := magen.New(g, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// An answer that passes the schema but does not decode into the node's
// type is rejected like any invalid result: the thread does not fail.
func TestUndecodableAnswerIsRejected(t *testing.T) {
	type count struct {
		N int `json:"n" jsonschema:"a count"`
	}
	runs := 0
	g := magen.NewGraph[docState]().
		AddNode("count", func(ctx context.Context, s docState) (docState, error) {
			runs++
			c, err := magen.Ask[count](ctx, magen.Guidance{Task: "count"})
			if err != nil {
				return s, err
			}
			s.Revisions = c.N
			return s, nil
		}).
		AddEdge(magen.Start, "count").AddEdge("count", magen.End)
	o := mustNew(t, g)
	ctx := context.Background()
	r, _ := o.Run(ctx, magen.Input{})
	for _, answer := range []string{`{"n":1.0}`, `{"n":1e400}`, `{"n":99999999999999999999}`} {
		_, err := o.Run(ctx, magen.Input{UserInput: json.RawMessage(answer), StateData: r.StateData})
		var ir *magen.InvalidResultError
		if !errors.As(err, &ir) || !strings.Contains(ir.Prompt, "does not fit the expected result") {
			t.Errorf("answer %s: Run = %v, want an invalid result", answer, err)
		}
	}
	cp, _ := o.Checkpointer().Load(ctx, r.StateData.ThreadID)
	if cp.Status != magen.StatusAwaiting || cp.Seq != 1 {
		t.Fatalf("after undecodable answers: %s at %d, want awaiting at 1", cp.Status, cp.Seq)
	}
	r, err := o.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"n":3}`), StateData: r.StateData})
	if err != nil || r.Status != magen.StatusCompleted {
		t.Errorf("corrected answer = %+v, %v", r, err)
	}
	_, err = o.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"n":1} {"n":2}`)})
	if !errors.Is(err, magen.ErrInvalidInput) {
		t.Errorf("two JSON values as userInput = %v, want ErrInvalidInput", err)
	}
}

func TestRoutePanicFailsThread(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("a", nop).
		AddEdge(magen.Start, "a").
		AddRoute("a", func(docState) string { panic("bad route") }, magen.Routes{"x": magen.End})
	o := mustNew(t, g)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil || r.Status != magen.StatusFailed || !strings.Contains(r.Error, "bad route") {
		t.Errorf("Run = %+v, %v; want a failed thread", r, err)
	}
}

func TestUnsavableStateFailsThread(t *testing.T) {
	type st struct{ X float64 }
	runs := 0
	g := magen.NewGraph[st]().
		AddNode("nan", func(ctx context.Context, s st) (st, error) { runs++; s.X = math.NaN(); return s, nil }).
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			_, err := magen.Ask[draftResult](ctx, magen.Guidance{Task: "x"})
			return s, err
		}).
		AddEdge(magen.Start, "nan").AddEdge("nan", "ask").AddEdge("ask", magen.End)
	o := mustNew(t, g)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil || r.Status != magen.StatusFailed || !strings.Contains(r.Error, "cannot be saved as JSON") {
		t.Fatalf("Run = %+v, %v; want a failed thread", r, err)
	}
	again, err := o.Run(context.Background(), magen.Input{StateData: r.StateData})
	if err != nil || again.Status != magen.StatusFailed || runs != 1 {
		t.Errorf("retry = %+v, %v after %d runs; want the failure again, no rerun", again, err, runs)
	}
}

func TestSelectRejectsDuplicateIDs(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("pick", func(ctx context.Context, s docState) (docState, error) {
			_, err := magen.Select(ctx, magen.Template{Task: "pick"}, []magen.Choice{{ID: "main"}, {ID: "main"}})
			return s, err
		}).
		AddEdge(magen.Start, "pick").AddEdge("pick", magen.End)
	r, err := mustNew(t, g).Run(context.Background(), magen.Input{})
	if err != nil || r.Status != magen.StatusFailed || !strings.Contains(r.Error, "distinct") {
		t.Errorf("Run = %+v, %v", r, err)
	}
}

func TestWorkflowToolChecksItsTask(t *testing.T) {
	// The thread waits for a guidance task, not for the workflow tool.
	o := mustNew(t, docGraph(&counters{}))
	tool := mcp.NewTool("helper", mcp.WithString("x", mcp.Required()))
	props, required := len(tool.InputSchema.Properties), len(tool.InputSchema.Required)
	c := mcpClient(t, func(s *server.MCPServer) {
		o.Register(s)
		if err := o.RegisterWorkflowTool(s, tool, func(context.Context, map[string]any) (string, error) { return "do it", nil }); err != nil {
			t.Fatal(err)
		}
	})
	if len(tool.InputSchema.Properties) != props || len(tool.InputSchema.Required) != required {
		t.Errorf("RegisterWorkflowTool changed the caller's tool: %+v", tool.InputSchema)
	}
	r := decode(t, callTool(t, c, magen.DefaultToolID, nil))
	res := callTool(t, c, tool.Name, map[string]any{"x": "1", "workflowStateData": r.StateData})
	if !res.IsError || !strings.Contains(text(res), "not waiting for helper") {
		t.Errorf("workflow tool during a guidance task = %q, want a stale-state error", text(res))
	}
	res = callTool(t, c, tool.Name, map[string]any{"x": "1", "workflowStateData": magen.StateData{ThreadID: r.StateData.ThreadID, Seq: 7}})
	if !res.IsError || !strings.Contains(text(res), "not 7") {
		t.Errorf("workflow tool with a wrong seq = %q", text(res))
	}
}
