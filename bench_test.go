package magen_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchAnswer answers any task of sqThreeSteps.
var benchAnswer = json.RawMessage(`{"n":1}`)

// benchTurns measures turns of sqThreeSteps, one call per op: each op sends
// the answer to the pending task (or starts a new thread), so a workflow
// is four ops.
func benchTurns(b *testing.B, turn func(sd magen.StateData, answer json.RawMessage) (*magen.Result, error)) {
	var sd magen.StateData
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var answer json.RawMessage
		if sd.ThreadID != "" {
			answer = benchAnswer
		}
		r, err := turn(sd, answer)
		if err != nil {
			b.Fatal(err)
		}
		sd = r.StateData
		if r.Status == magen.StatusCompleted {
			sd = magen.StateData{}
		}
	}
}

// runTurns benchmarks the transport-free core of an orchestrator built
// with opts.
func runTurns(b *testing.B, opts ...magen.Option) {
	o, err := magen.New(sqThreeSteps(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	ctx := context.Background()
	benchTurns(b, func(sd magen.StateData, answer json.RawMessage) (*magen.Result, error) {
		return o.Run(ctx, magen.Input{UserInput: answer, StateData: sd})
	})
}

// BenchmarkTurn measures one orchestrator turn of a 3-node graph whose
// nodes each ask once, with memory checkpoints: the transport-free core,
// and the MCP handler on top of it.
func BenchmarkTurn(b *testing.B) {
	memory := func() []magen.Option {
		return []magen.Option{magen.WithCheckpointer(magen.NewMemoryCheckpointer()), magen.WithLogger(discard())}
	}
	b.Run("core", func(b *testing.B) { runTurns(b, memory()...) })
	b.Run("mcp_handler", func(b *testing.B) {
		o, err := magen.New(sqThreeSteps(), memory()...)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		benchTurns(b, func(sd magen.StateData, answer json.RawMessage) (*magen.Result, error) {
			req := mcp.CallToolRequest{}
			req.Params.RawArguments = json.RawMessage(`{}`)
			if answer != nil {
				req.Params.RawArguments, _ = json.Marshal(map[string]any{"userInput": answer, "workflowStateData": sd})
			}
			res, err := o.Handle(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, text(res))
			}
			return res.StructuredContent.(*magen.Result), nil
		})
	})
}
