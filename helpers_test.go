package magen_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// docState is the state of the test workflow: draft → review → (publish | draft).
type docState struct {
	Topic     string `json:"topic"`
	Draft     string `json:"draft,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
	Approved  bool   `json:"approved,omitempty"`
	Revisions int    `json:"revisions,omitempty"`
	Published string `json:"published,omitempty"`
}

type draftResult struct {
	Text string `json:"text" jsonschema:"the draft text"`
}

type reviewResult struct {
	Approved bool   `json:"approved" jsonschema:"whether the draft can be published"`
	Feedback string `json:"feedback,omitempty" jsonschema:"what to change, if not approved"`
}

// counters records how often each node ran, to prove nothing ran twice.
type counters struct{ draft, review, publish atomic.Int32 }

func docGraph(c *counters) *magen.Graph[docState] {
	return magen.NewGraph[docState]().
		AddNode("draft", func(ctx context.Context, s docState) (docState, error) {
			c.draft.Add(1)
			task := "Write a one-paragraph draft about " + s.Topic + "."
			if s.Feedback != "" {
				task += " Address this feedback: " + s.Feedback
			}
			out, err := magen.Ask[draftResult](ctx, magen.Guidance{Task: task, Example: draftResult{Text: "Go is a language..."}})
			if err != nil {
				return s, err
			}
			s.Draft = out.Text
			return s, nil
		}).
		AddNode("review", func(ctx context.Context, s docState) (docState, error) {
			c.review.Add(1)
			out, err := magen.Ask[reviewResult](ctx, magen.Guidance{Task: "Review this draft:\n\n" + s.Draft})
			if err != nil {
				return s, err
			}
			s.Approved, s.Feedback = out.Approved, out.Feedback
			if !out.Approved {
				s.Revisions++
			}
			return s, nil
		}).
		AddNode("publish", func(ctx context.Context, s docState) (docState, error) {
			c.publish.Add(1)
			s.Published = strings.ToUpper(s.Draft)
			return s, nil
		}).
		AddEdge(magen.Start, "draft").
		AddEdge("draft", "review").
		AddRoute("review", func(s docState) string {
			if s.Approved {
				return "approved"
			}
			return "rejected"
		}, magen.Routes{"approved": "publish", "rejected": "draft"}).
		AddEdge("publish", magen.End)
}

// mcpClient serves what reg registers over mcp-go's in-process transport.
func mcpClient(t testing.TB, reg func(*server.MCPServer)) *client.Client {
	t.Helper()
	s := server.NewMCPServer("test", "1.0.0", server.WithToolCapabilities(false))
	reg(s)
	c, err := magentest.Connect(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// callTool calls a tool with arbitrary arguments and fails the test only on
// a transport error.
func callTool(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// decode returns the structured content of a successful call.
func decode(t testing.TB, res *mcp.CallToolResult) magen.Result {
	t.Helper()
	p, r, err := magentest.ParseResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if p.IsError {
		t.Fatalf("tool error: %s", p.Text)
	}
	return *r
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// args builds orchestrator arguments.
func args(userInput any, sd magen.StateData) map[string]any {
	m := map[string]any{}
	if userInput != nil {
		m["userInput"] = userInput
	}
	if sd.ThreadID != "" {
		m["workflowStateData"] = sd
	}
	return m
}
