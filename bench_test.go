package magen_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
)

type benchState struct {
	A, B, C string
}

type benchAnswer struct {
	V string `json:"v" jsonschema:"the value"`
}

// benchGraph has three nodes that each ask once.
func benchGraph() *magen.Graph[benchState] {
	ask := func(task string, set func(*benchState, string)) magen.NodeFunc[benchState] {
		return func(ctx context.Context, s benchState) (benchState, error) {
			out, err := magen.Ask[benchAnswer](ctx, magen.Guidance{Task: task})
			if err != nil {
				return s, err
			}
			set(&s, out.V)
			return s, nil
		}
	}
	return magen.NewGraph[benchState]().
		AddNode("a", ask("first", func(s *benchState, v string) { s.A = v })).
		AddNode("b", ask("second", func(s *benchState, v string) { s.B = v })).
		AddNode("c", ask("third", func(s *benchState, v string) { s.C = v })).
		AddEdge(magen.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", magen.End)
}

// BenchmarkTurn measures one orchestrator turn (one op = one call) of a
// 3-node graph whose nodes each ask once, with memory checkpoints: the
// transport-free core, and the MCP handler on top of it.
func BenchmarkTurn(b *testing.B) {
	answer := json.RawMessage(`{"v":"value"}`)
	b.Run("core", func(b *testing.B) {
		o, err := magen.New(benchGraph(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()), magen.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		var sd magen.StateData
		b.ReportAllocs()
		for b.Loop() {
			in := magen.Input{StateData: sd}
			if sd.ThreadID != "" {
				in.UserInput = answer
			}
			r, err := o.Run(ctx, in)
			if err != nil {
				b.Fatal(err)
			}
			sd = r.StateData
			if r.Status == magen.StatusCompleted {
				sd = magen.StateData{}
			}
		}
	})
	b.Run("mcp_handler", func(b *testing.B) {
		o, err := magen.New(benchGraph(), magen.WithCheckpointer(magen.NewMemoryCheckpointer()), magen.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		var sd magen.StateData
		b.ReportAllocs()
		for b.Loop() {
			req := mcp.CallToolRequest{}
			if sd.ThreadID == "" {
				req.Params.RawArguments = json.RawMessage(`{}`)
			} else {
				raw, _ := json.Marshal(map[string]any{"userInput": answer, "workflowStateData": sd})
				req.Params.RawArguments = raw
			}
			res, err := o.Handle(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, text(res))
			}
			r := res.StructuredContent.(*magen.Result)
			sd = r.StateData
			if r.Status == magen.StatusCompleted {
				sd = magen.StateData{}
			}
		}
	})
}
