// Command quickstart runs a small support-ticket triage workflow with magen.
//
// By default it drives the workflow end to end over mcp-go's in-process
// client, with a scripted stand-in for the LLM, and prints every prompt and
// the final state. With -stdio it serves the orchestrator over stdio, for a
// real MCP client such as Claude Desktop or MCP Inspector.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -stdio
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Ticket is the workflow's state.
type Ticket struct {
	Email    string `json:"email" jsonschema:"the customer's email address"`
	Message  string `json:"message" jsonschema:"the customer's message"`
	Plan     string `json:"plan,omitempty"`
	Category string `json:"category,omitempty"`
	Urgent   bool   `json:"urgent,omitempty"`
	Incident string `json:"incident,omitempty"`
	Reply    string `json:"reply,omitempty"`
}

// Triage is the LLM's classification of a ticket.
type Triage struct {
	Category string `json:"category" jsonschema:"one of: billing, bug, question"`
	Urgent   bool   `json:"urgent" jsonschema:"true if the customer cannot work at all"`
}

// Reply is the LLM's answer to the customer.
type Reply struct {
	Text string `json:"text" jsonschema:"the reply to send, in plain text"`
}

// plans stands in for a customer database.
var plans = map[string]string{"ada@example.com": "enterprise", "bob@example.com": "free"}

// Graph builds the workflow: lookup → triage → (escalate →) reply.
func Graph() *magen.Graph[Ticket] {
	return magen.NewGraph[Ticket]().
		AddNode("lookup", func(ctx context.Context, t Ticket) (Ticket, error) {
			if t.Email == "" || t.Message == "" {
				return t, fmt.Errorf("the ticket needs an email and a message")
			}
			t.Plan = plans[strings.ToLower(t.Email)]
			if t.Plan == "" {
				t.Plan = "free"
			}
			return t, nil
		}).
		AddNode("triage", func(ctx context.Context, t Ticket) (Ticket, error) {
			out, err := magen.Ask[Triage](ctx, magen.Guidance{
				Task:    "Classify this support message from a " + t.Plan + " customer:\n\n> " + t.Message,
				Example: Triage{Category: "bug", Urgent: false},
			})
			if err != nil {
				return t, err
			}
			if c := out.Category; c != "billing" && c != "bug" && c != "question" {
				return t, fmt.Errorf("unknown category %q", c)
			}
			t.Category, t.Urgent = out.Category, out.Urgent
			return t, nil
		}).
		AddNode("escalate", func(ctx context.Context, t Ticket) (Ticket, error) {
			h := fnv.New32a()
			h.Write([]byte(t.Email + t.Message))
			t.Incident = fmt.Sprintf("INC-%06d", h.Sum32()%1_000_000)
			return t, nil
		}).
		AddNode("reply", func(ctx context.Context, t Ticket) (Ticket, error) {
			task := "Write a short, friendly reply to this " + t.Category + " message:\n\n> " + t.Message
			if t.Incident != "" {
				task += "\n\nTell the customer that incident " + t.Incident + " is open and on-call engineers are on it."
			}
			out, err := magen.Ask[Reply](ctx, magen.Guidance{Task: task})
			if err != nil {
				return t, err
			}
			t.Reply = out.Text
			return t, nil
		}).
		AddEdge(magen.Start, "lookup").
		AddEdge("lookup", "triage").
		AddRoute("triage", func(t Ticket) string {
			if t.Urgent && t.Plan == "enterprise" {
				return "urgent"
			}
			return "routine"
		}, magen.Routes{"urgent": "escalate", "routine": "reply"}).
		AddEdge("escalate", "reply").
		AddEdge("reply", magen.End)
}

func main() {
	stdio := flag.Bool("stdio", false, "serve the orchestrator over stdio for a real MCP client")
	flag.Parse()
	log := slog.New(magen.NewConsoleHandler(os.Stderr, slog.LevelInfo))
	if err := run(*stdio, log); err != nil {
		log.Error("quickstart", "error", err)
		os.Exit(1)
	}
}

func run(stdio bool, log *slog.Logger) error {
	orch, err := magen.New(Graph(),
		magen.WithToolID("support-triage"),
		magen.WithTitle("Support triage"),
		magen.WithDescription("Triages a customer support message and drafts a reply. Start it with userInput {\"email\": ..., \"message\": ...}."),
		magen.WithLogger(log),
	)
	if err != nil {
		return err
	}
	defer orch.Close()
	s := server.NewMCPServer("magen-quickstart", "0.1.0", server.WithToolCapabilities(false))
	orch.Register(s)
	if stdio {
		return server.ServeStdio(s)
	}
	ctx := context.Background()
	final, err := drive(ctx, s, Ticket{Email: "ada@example.com", Message: "Checkout has returned 500 errors since 9am; nobody can pay."}, os.Stdout)
	if err != nil {
		return err
	}
	t, status, err := orch.State(ctx, final.ThreadID)
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(t, "", "  ")
	fmt.Printf("──── final state (%s) ────\n%s\n", status, out)
	return nil
}

var incident = regexp.MustCompile(`INC-[0-9]+`)

// scriptedLLM answers each task the way an LLM would.
func scriptedLLM(task *magen.Task) any {
	switch task.NodeID {
	case "triage":
		urgent := strings.Contains(task.Instructions, "nobody can")
		return Triage{Category: "bug", Urgent: urgent}
	case "reply":
		text := "Thanks for reporting this; we are looking into it."
		if inc := incident.FindString(task.Instructions); inc != "" {
			text = "Sorry for the trouble! Incident " + inc + " is open and our on-call engineers are on it."
		}
		return Reply{Text: text}
	}
	return map[string]any{}
}

// drive plays the LLM's side over the in-process MCP client, printing each
// prompt, and returns the thread's final workflowStateData.
func drive(ctx context.Context, s *server.MCPServer, start Ticket, w io.Writer) (magen.StateData, error) {
	c, err := magentest.Connect(ctx, s)
	if err != nil {
		return magen.StateData{}, err
	}
	defer c.Close()

	args := map[string]any{"userInput": start}
	for turn := 1; ; turn++ {
		req := mcp.CallToolRequest{}
		req.Params.Name = "support-triage"
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return magen.StateData{}, err
		}
		p, r, err := magentest.ParseResult(res)
		if err != nil {
			return magen.StateData{}, err
		}
		if p.IsError {
			return magen.StateData{}, fmt.Errorf("turn %d: tool error: %s", turn, p.Text)
		}
		fmt.Fprintf(w, "──── turn %d: %s ────\n%s\n", turn, r.Status, r.Prompt)
		if r.Status != magen.StatusAwaiting {
			return r.StateData, nil
		}
		args = map[string]any{"userInput": scriptedLLM(r.Task), "workflowStateData": r.StateData}
	}
}
