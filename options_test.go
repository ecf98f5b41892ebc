package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
)

// A server with its own argument names: {payload, session}.
func TestCustomInputSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"payload":{"type":"object"},"session":{"type":"object","properties":{"thread_id":{"type":"string"},"seq":{"type":"integer"}}}}}`)
	o, _ := newDoc(t,
		magen.WithInputSchema(schema),
		magen.WithUserInputExtractor(func(args map[string]json.RawMessage) (json.RawMessage, error) {
			return args["payload"], nil
		}),
		magen.WithStateDataExtractor(func(args map[string]json.RawMessage) (magen.StateData, error) {
			return magen.ParseStateData(args["session"])
		}),
	)
	c := mcpClient(t, o.Register)
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(tools.Tools[0].InputSchema)
	if !strings.Contains(string(raw), `"payload"`) || strings.Contains(string(raw), "userInput") {
		t.Errorf("input schema = %s, want the custom one", raw)
	}
	r := decode(t, callTool(t, c, tool, map[string]any{"payload": map[string]any{"topic": "Go"}}))
	r = decode(t, callTool(t, c, tool, map[string]any{"payload": map[string]any{"text": "x"}, "session": r.StateData}))
	if r.Task == nil || r.Task.NodeID != "review" {
		t.Errorf("second call = %+v, want the review task", r)
	}
	if res := callTool(t, c, tool, map[string]any{"session": "nope"}); !res.IsError {
		t.Errorf("a bad session was accepted")
	}
}

func TestWithInitialState(t *testing.T) {
	o, _ := newDoc(t, magen.WithInitialState(func(ctx context.Context, in json.RawMessage) (docState, error) {
		var req struct {
			Subject string `json:"subject"`
		}
		if err := json.Unmarshal(in, &req); err != nil || req.Subject == "" {
			return docState{}, errors.New(`give a "subject"`)
		}
		return docState{Topic: strings.ToUpper(req.Subject)}, nil
	}))
	r, err := o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"subject":"go"}`)})
	if err != nil || !strings.Contains(r.Prompt, "draft about GO.") {
		t.Fatalf("Run = %v; prompt:\n%s", err, r.Prompt)
	}
	_, err = o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{}`)})
	if !errors.Is(err, magen.ErrInvalidInput) || !strings.Contains(err.Error(), `give a "subject"`) {
		t.Errorf("Run with a bad start = %v, want ErrInvalidInput with the reason", err)
	}
}
