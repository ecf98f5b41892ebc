package magen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type fixResult struct {
	Fixed   bool   `json:"fixed" jsonschema:"whether the build is fixed"`
	Summary string `json:"summary" jsonschema:"what was changed"`
}

type buildState struct {
	Log     string `json:"log"`
	Summary string `json:"summary"`
}

func recoverGraph() *magen.Graph[buildState] {
	return magen.NewGraph[buildState]().
		AddNode("recover", func(ctx context.Context, s buildState) (buildState, error) {
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
}

// registerRecovery adds the delegated tool, and records what it was given.
func registerRecovery(t testing.TB, o *magen.Orchestrator[buildState], s *server.MCPServer, saw *string) {
	t.Helper()
	err := o.RegisterWorkflowTool(s, mcp.NewTool("build-recovery", mcp.WithDescription("Fixes a failed build."),
		mcp.WithString("log", mcp.Required(), mcp.Description("the build log"))),
		func(ctx context.Context, args map[string]any) (string, error) {
			*saw = fmt.Sprint(args)
			return "# Recover the build\n\nFix the error in this log:\n\n" + fmt.Sprint(args["log"]), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDelegateRoundTrip plays the LLM by hand across the two tools.
func TestDelegateRoundTrip(t *testing.T) {
	o := mustNew(t, recoverGraph(), magen.WithToolID("builder"))
	var saw string
	c := mcpClient(t, func(s *server.MCPServer) {
		o.Register(s)
		registerRecovery(t, o, s, &saw)
	})

	// The tool's schema gained workflowStateData.
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "build-recovery" && (tl.InputSchema.Properties["workflowStateData"] == nil || !strings.Contains(fmt.Sprint(tl.InputSchema.Required), "workflowStateData")) {
			t.Errorf("build-recovery input schema = %+v, want a required workflowStateData", tl.InputSchema)
		}
	}

	// 1. The orchestrator delegates.
	r := decode(t, callTool(t, c, "builder", args(map[string]any{"log": "missing ;"}, magen.StateData{})))
	if r.Task == nil || r.Task.Kind != magen.KindDelegate || r.Task.Tool != "build-recovery" {
		t.Fatalf("first result = %+v, want a delegate task", r)
	}
	if !strings.Contains(r.Prompt, `"workflowStateData"`) || !strings.Contains(r.Prompt, "`build-recovery`") {
		t.Errorf("delegate prompt does not give the tool's arguments:\n%s", r.Prompt)
	}
	// 2. The LLM calls the named tool with the input the prompt gives.
	var toolArgs map[string]any
	if err := json.Unmarshal(r.Task.ToolInput, &toolArgs); err != nil {
		t.Fatal(err)
	}
	toolArgs["workflowStateData"] = r.StateData
	tr := callTool(t, c, "build-recovery", toolArgs)
	if tr.IsError || saw != "map[log:missing ;]" {
		t.Fatalf("delegated tool = %s (saw %q)", text(tr), saw)
	}
	for _, want := range []string{"# Recover the build", "`builder`", `"seq":1`, `"fixed"`} {
		if !strings.Contains(text(tr), want) {
			t.Errorf("delegated tool result does not contain %q:\n%s", want, text(tr))
		}
	}
	if tr.StructuredContent == nil {
		t.Errorf("delegated tool result has no structured content")
	}
	// Without workflowStateData the tool says it is part of a workflow.
	if res := callTool(t, c, "build-recovery", map[string]any{"log": "x"}); !res.IsError || !strings.Contains(text(res), "workflowStateData is required") {
		t.Errorf("tool without state data = %s", text(res))
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
	// The tool, called again for a finished thread, gets a clear error.
	toolArgs["workflowStateData"] = r.StateData
	if res := callTool(t, c, "build-recovery", toolArgs); !res.IsError || !strings.Contains(text(res), "not waiting for a delegated task") {
		t.Errorf("tool on a completed thread = %s", text(res))
	}
}

// TestDelegateInHarness lets magentest make the same round trip.
func TestDelegateInHarness(t *testing.T) {
	h := magentest.New(t, recoverGraph(), magen.WithToolID("builder"))
	var saw string
	registerRecovery(t, h.Orchestrator, h.Server, &saw)
	out := h.Play(t, buildState{Log: "missing ;"},
		magentest.Reply("recover", func(p magentest.Prompt) (any, error) {
			if p.Tool != "build-recovery" || !strings.Contains(p.Text, "Fix the error in this log") {
				return nil, fmt.Errorf("the LLM should answer the tool's prompt, got %q from %q", p.Text, p.Tool)
			}
			return fixResult{Fixed: true, Summary: "added ;"}, nil
		}))
	if out.Status != magen.StatusCompleted || out.State.Summary != "added ;" || out.Calls != 3 {
		t.Errorf("outcome = %s %+v after %d calls, want completed after 3", out.Status, out.State, out.Calls)
	}
	if err := magentest.CheckGolden("testdata/delegate", out.Prompts, magentest.Updating()); err != nil {
		t.Error(err)
	}
}

func TestDelegateInputMustBeObject(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("d", func(ctx context.Context, s docState) (docState, error) {
			_, err := magen.Delegate[fixResult](ctx, magen.Delegation{Tool: "x", Input: []int{1}})
			return s, err
		}).
		AddEdge(magen.Start, "d").AddEdge("d", magen.End)
	o := mustNew(t, g)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil || r.Status != magen.StatusFailed || !strings.Contains(r.Error, "JSON object") {
		t.Errorf("Run = %+v, %v; want a failed thread explaining the input", r, err)
	}
}
