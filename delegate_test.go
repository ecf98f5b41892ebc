package magen_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type fixResult struct {
	Fixed   bool   `json:"fixed" jsonschema:"whether the build is fixed"`
	Summary string `json:"summary" jsonschema:"what was changed"`
}

func TestDelegateRoundTrip(t *testing.T) {
	type state struct {
		Log     string `json:"log"`
		Summary string `json:"summary"`
	}
	g := magen.NewGraph[state]().
		AddNode("recover", func(ctx context.Context, s state) (state, error) {
			out, err := magen.Delegate[fixResult](ctx, magen.Delegation{
				Tool:  "build-recovery",
				Input: map[string]any{"log": s.Log},
				Note:  "The build failed.",
			})
			if err != nil {
				return s, err
			}
			s.Summary = out.Summary
			return s, nil
		}).
		AddEdge(magen.Start, "recover").AddEdge("recover", magen.End)
	o, err := magen.New(g, magen.WithToolID("builder"))
	if err != nil {
		t.Fatal(err)
	}
	var toolSawLog string
	c := mcpClient(t, func(s *server.MCPServer) {
		o.Register(s)
		s.AddTool(mcp.NewTool("build-recovery"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := req.GetArguments()
			toolSawLog, _ = a["log"].(string)
			raw, _ := json.Marshal(a["workflowStateData"])
			sd, err := magen.ParseStateData(raw)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return o.DelegatedResult(ctx, sd, "# Recover the build\n\nFix the error in the log.")
		})
	})

	// 1. The orchestrator delegates.
	r := decode(t, callTool(t, c, "builder", args(map[string]any{"log": "missing ;"}, magen.StateData{})))
	if r.Task == nil || r.Task.Kind != magen.KindDelegate || r.Task.Tool != "build-recovery" {
		t.Fatalf("first result = %+v, want a delegate task", r)
	}
	// 2. The LLM calls the named tool with the input the prompt gives.
	var toolArgs map[string]any
	if err := json.Unmarshal(r.Task.ToolInput, &toolArgs); err != nil {
		t.Fatal(err)
	}
	toolArgs["workflowStateData"] = r.StateData
	tr := callTool(t, c, "build-recovery", toolArgs)
	if tr.IsError || toolSawLog != "missing ;" {
		t.Fatalf("delegated tool = %s (saw log %q)", text(tr), toolSawLog)
	}
	for _, want := range []string{"# Recover the build", "`builder`", `"seq":1`, `"fixed"`} {
		if !strings.Contains(text(tr), want) {
			t.Errorf("delegated tool result does not contain %q:\n%s", want, text(tr))
		}
	}
	if tr.StructuredContent == nil {
		t.Errorf("delegated tool result has no structured content")
	}
	if !strings.Contains(r.Prompt, `"workflowStateData"`) || !strings.Contains(r.Prompt, "`build-recovery`") {
		t.Errorf("delegate prompt does not give the tool's arguments:\n%s", r.Prompt)
	}
	// 3. The LLM calls the orchestrator back.
	r = decode(t, callTool(t, c, "builder", args(map[string]any{"fixed": true, "summary": "added ;"}, r.StateData)))
	if r.Status != magen.StatusCompleted {
		t.Fatalf("final = %+v", r)
	}
	s, _, _ := o.State(context.Background(), r.StateData.ThreadID)
	if s.Summary != "added ;" {
		t.Errorf("summary = %q", s.Summary)
	}
	// A delegated tool called for a finished thread gets a clear error.
	if _, err := o.DelegatedResult(context.Background(), r.StateData, "x"); err == nil {
		t.Errorf("DelegatedResult on a completed thread succeeded")
	}
}

func TestDelegateInputMustBeObject(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("d", func(ctx context.Context, s docState) (docState, error) {
			_, err := magen.Delegate[fixResult](ctx, magen.Delegation{Tool: "x", Input: []int{1}})
			return s, err
		}).
		AddEdge(magen.Start, "d").AddEdge("d", magen.End)
	o, err := magen.New(g)
	if err != nil {
		t.Fatal(err)
	}
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil || r.Status != magen.StatusFailed || !strings.Contains(r.Error, "JSON object") {
		t.Errorf("Run = %+v, %v; want a failed thread explaining the input", r, err)
	}
}
