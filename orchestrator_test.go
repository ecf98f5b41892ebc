package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
)

const tool = magen.DefaultToolID

func newDoc(t *testing.T, opts ...magen.Option) (*magen.Orchestrator[docState], *counters) {
	t.Helper()
	n := &counters{}
	return mustNew(t, docGraph(n), opts...), n
}

func TestHappyPathOverMCP(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)

	r := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	if r.Status != magen.StatusAwaiting || r.Task == nil || r.Task.NodeID != "draft" || r.Task.Kind != magen.KindGuidance {
		t.Fatalf("first call = %+v, want a guidance task from node draft", r)
	}
	if len(r.StateData.ThreadID) < 26 || r.StateData.Seq != 1 {
		t.Fatalf("workflowStateData = %+v, want a 128-bit thread id and seq 1", r.StateData)
	}
	var schema map[string]any
	if err := json.Unmarshal(r.Task.ResultSchema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("resultSchema = %s, want an object schema", r.Task.ResultSchema)
	}
	for _, want := range []string{"Write a one-paragraph draft about Go.", `"thread_id":"` + r.StateData.ThreadID + `","seq":1`, "# Output schema"} {
		if !strings.Contains(r.Prompt, want) {
			t.Errorf("prompt does not contain %q:\n%s", want, r.Prompt)
		}
	}

	r = decode(t, callTool(t, c, tool, args(map[string]any{"text": "Go is fun"}, r.StateData)))
	if r.Task == nil || r.Task.NodeID != "review" || r.StateData.Seq != 2 {
		t.Fatalf("second call = %+v, want the review task at seq 2", r)
	}
	r = decode(t, callTool(t, c, tool, args(map[string]any{"approved": false, "feedback": "shorter"}, r.StateData)))
	if r.Task == nil || r.Task.NodeID != "draft" || !strings.Contains(r.Prompt, "shorter") {
		t.Fatalf("after rejection = %+v, want the draft task again with the feedback", r)
	}
	r = decode(t, callTool(t, c, tool, args(map[string]any{"text": "Go."}, r.StateData)))
	r = decode(t, callTool(t, c, tool, args(map[string]any{"approved": true}, r.StateData)))
	if r.Status != magen.StatusCompleted || r.Task != nil {
		t.Fatalf("final call = %+v, want completed", r)
	}

	got, status, err := o.State(context.Background(), r.StateData.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	want := docState{Topic: "Go", Draft: "Go.", Approved: true, Revisions: 1, Published: "GO."}
	if diff := cmp.Diff(want, got); diff != "" || status != magen.StatusCompleted {
		t.Errorf("final state (-want +got):\n%s\nstatus %s", diff, status)
	}
	if d, rv, p := n.draft.Load(), n.review.Load(), n.publish.Load(); d != 4 || rv != 4 || p != 1 {
		// Each asking node runs twice per task: once to ask, once on resume.
		t.Errorf("node runs draft=%d review=%d publish=%d, want 4 4 1", d, rv, p)
	}
	h, err := o.Checkpointer().History(context.Background(), r.StateData.ThreadID)
	if err != nil || len(h) != 5 {
		t.Fatalf("History = %d checkpoints, %v; want 5", len(h), err)
	}
	for i, cp := range h {
		if cp.Seq != int64(i+1) || cp.Parent != int64(i) {
			t.Errorf("checkpoint %d: seq %d parent %d", i, cp.Seq, cp.Parent)
		}
	}
}

func TestToolsList(t *testing.T) {
	o, _ := newDoc(t, magen.WithToolID("docs"), magen.WithTitle("Docs"))
	c := mcpClient(t, o.Register)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if len(res.Tools) != 1 {
		t.Fatalf("ListTools = %d tools, want 1", len(res.Tools))
	}
	raw, err := json.Marshal(res.Tools[0])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		InputSchema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
		OutputSchema struct {
			Required []string `json:"required"`
		} `json:"outputSchema"`
		Annotations struct {
			Title           string `json:"title"`
			DestructiveHint *bool  `json:"destructiveHint"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "docs" || got.Title != "Docs" || got.InputSchema.Type != "object" ||
		got.InputSchema.Properties["userInput"] == nil || got.InputSchema.Properties["workflowStateData"] == nil {
		t.Errorf("tool = %s", raw)
	}
	if diff := cmp.Diff([]string{"orchestrationInstructionsPrompt", "status", "workflowStateData"}, got.OutputSchema.Required); diff != "" {
		t.Errorf("output schema required (-want +got):\n%s", diff)
	}
	if got.Annotations.Title != "Docs" || got.Annotations.DestructiveHint == nil || *got.Annotations.DestructiveHint {
		t.Errorf("annotations = %+v", got.Annotations)
	}
}

func TestStartWithoutThread(t *testing.T) {
	for name, a := range map[string]any{
		"no arguments":           nil,
		"empty object":           map[string]any{},
		"empty thread_id":        map[string]any{"userInput": map[string]any{"topic": "x"}, "workflowStateData": map[string]any{"thread_id": ""}},
		"null workflowStateData": map[string]any{"workflowStateData": nil},
	} {
		t.Run(name, func(t *testing.T) {
			o, _ := newDoc(t)
			c := mcpClient(t, o.Register)
			r := decode(t, callTool(t, c, tool, a))
			if r.Status != magen.StatusAwaiting || r.StateData.Seq != 1 || r.StateData.ThreadID == "" {
				t.Errorf("result = %+v, want a new thread at seq 1", r)
			}
		})
	}
}

func TestThreadIDsAreDistinct(t *testing.T) {
	o, _ := newDoc(t)
	seen := map[string]bool{}
	for range 200 {
		r, err := o.Run(context.Background(), magen.Input{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.StateData.ThreadID] || len(r.StateData.ThreadID) != 26 {
			t.Fatalf("thread id %q repeated or not 26 base32 characters", r.StateData.ThreadID)
		}
		seen[r.StateData.ThreadID] = true
	}
}

func TestUnknownThread(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)
	res := callTool(t, c, tool, args(map[string]any{"text": "x"}, magen.StateData{ThreadID: "NOSUCHTHREAD"}))
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("result = %+v, want a tool error without structured content", res)
	}
	if !strings.Contains(text(res), "thread not found") || !strings.Contains(text(res), "NOSUCHTHREAD") {
		t.Errorf("error text %q does not explain the unknown thread", text(res))
	}
	if n.draft.Load() != 0 {
		t.Errorf("a node ran for an unknown thread")
	}
	_, err := o.Run(context.Background(), magen.Input{StateData: magen.StateData{ThreadID: "NOSUCHTHREAD"}})
	if !errors.Is(err, magen.ErrThreadNotFound) {
		t.Errorf("Run = %v, want ErrThreadNotFound", err)
	}
}

func TestInvalidResultDoesNotAdvance(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)
	first := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))

	bad := []struct {
		name     string
		input    any
		problems []string
	}{
		{"wrong type", map[string]any{"text": 42}, []string{"`text`", "Expected: string, given: integer"}},
		{"missing field", map[string]any{}, []string{"text is required"}},
		{"extra field", map[string]any{"text": "x", "bogus": 1}, []string{"Additional property bogus is not allowed"}},
		{"no userInput", nil, []string{"`userInput`: is missing"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, c, tool, args(tc.input, first.StateData))
			if !res.IsError || res.StructuredContent != nil {
				t.Fatalf("result = %+v, want a tool error", res)
			}
			msg := text(res)
			for _, want := range append(tc.problems, "did not advance", first.StateData.ThreadID, "# Output schema", "Write a one-paragraph draft") {
				if !strings.Contains(msg, want) {
					t.Errorf("invalid-result prompt does not contain %q:\n%s", want, msg)
				}
			}
		})
	}
	cp, err := o.Checkpointer().Load(context.Background(), first.StateData.ThreadID)
	if err != nil || cp.Seq != 1 || n.draft.Load() != 1 {
		t.Fatalf("after invalid results: seq %d, draft ran %d times, err %v; want seq 1, 1 run", cp.Seq, n.draft.Load(), err)
	}
	r := decode(t, callTool(t, c, tool, args(map[string]any{"text": "fixed"}, first.StateData)))
	if r.Task == nil || r.Task.NodeID != "review" || r.StateData.Seq != 2 {
		t.Errorf("corrected call = %+v, want the review task at seq 2", r)
	}
	var ir *magen.InvalidResultError
	_, err = o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"approved":"yes"}`), StateData: r.StateData})
	if !errors.As(err, &ir) || !errors.Is(err, magen.ErrInvalidInput) || len(ir.Problems) != 1 || ir.Problems[0].Field != "approved" {
		t.Errorf("Run with bad result = %v, want *InvalidResultError naming approved", err)
	}
}

func TestFinishedThreadRepeatsFinalMessage(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)
	r := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	r = decode(t, callTool(t, c, tool, args(map[string]any{"text": "x"}, r.StateData)))
	final := decode(t, callTool(t, c, tool, args(map[string]any{"approved": true}, r.StateData)))
	runs := n.publish.Load()
	for _, sd := range []magen.StateData{final.StateData, r.StateData, {ThreadID: final.StateData.ThreadID}} {
		again := decode(t, callTool(t, c, tool, args(map[string]any{"approved": true}, sd)))
		if diff := cmp.Diff(final, again); diff != "" {
			t.Errorf("call on completed thread with %+v (-want +got):\n%s", sd, diff)
		}
	}
	if n.publish.Load() != runs {
		t.Errorf("publish ran again on a completed thread")
	}
}

func TestNodeErrorFailsThread(t *testing.T) {
	boom := errors.New("disk on fire")
	for name, fn := range map[string]magen.NodeFunc[docState]{
		"error": func(ctx context.Context, s docState) (docState, error) { return s, boom },
		"panic": func(ctx context.Context, s docState) (docState, error) { panic("disk on fire") },
	} {
		t.Run(name, func(t *testing.T) {
			g := magen.NewGraph[docState]().
				AddNode("prepare", func(ctx context.Context, s docState) (docState, error) { s.Draft = "prepared"; return s, nil }).
				AddNode("burn", fn).
				AddEdge(magen.Start, "prepare").AddEdge("prepare", "burn").AddEdge("burn", magen.End)
			o := mustNew(t, g)
			c := mcpClient(t, o.Register)
			r := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
			if r.Status != magen.StatusFailed || !strings.Contains(r.Error, "disk on fire") || !strings.Contains(r.Error, `"burn"`) {
				t.Fatalf("result = %+v, want failed naming node burn and the cause", r)
			}
			if !strings.Contains(r.Prompt, "disk on fire") || !strings.Contains(r.Prompt, "Workflow failed") {
				t.Errorf("failure prompt = %q", r.Prompt)
			}
			s, status, err := o.State(context.Background(), r.StateData.ThreadID)
			if err != nil || status != magen.StatusFailed || s.Draft != "prepared" {
				t.Errorf("State = %+v %s %v, want the state before the failing node", s, status, err)
			}
			again := decode(t, callTool(t, c, tool, args(nil, r.StateData)))
			if diff := cmp.Diff(r, again); diff != "" {
				t.Errorf("call on failed thread (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDuplicateResumeAdvancesOnce(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)
	first := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	answer := args(map[string]any{"text": "draft one"}, first.StateData)
	second := decode(t, callTool(t, c, tool, answer))
	retry := decode(t, callTool(t, c, tool, answer))
	if diff := cmp.Diff(second, retry); diff != "" {
		t.Errorf("retry did not get the current prompt back (-want +got):\n%s", diff)
	}
	// Even a retry with a different answer is not applied.
	other := decode(t, callTool(t, c, tool, args(map[string]any{"text": "draft two"}, first.StateData)))
	if diff := cmp.Diff(second, other); diff != "" {
		t.Errorf("stale call with another answer (-want +got):\n%s", diff)
	}
	if n.draft.Load() != 2 || n.review.Load() != 1 {
		t.Errorf("draft ran %d times, review %d; want 2 and 1", n.draft.Load(), n.review.Load())
	}
	s, _, _ := o.State(context.Background(), first.StateData.ThreadID)
	if s.Draft != "draft one" {
		t.Errorf("draft = %q, want the first answer", s.Draft)
	}
	res := callTool(t, c, tool, args(map[string]any{"text": "x"}, magen.StateData{ThreadID: first.StateData.ThreadID, Seq: 9}))
	if !res.IsError || !strings.Contains(text(res), "no step 9") {
		t.Errorf("future seq = %s, want a tool error", text(res))
	}
}

// blockingGraph has one node that asks, then blocks in a deterministic node
// until released, so that a second call arrives while the first runs.
func TestConcurrentCallsOnOneThread(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var slowRuns sync.Map
	g := magen.NewGraph[docState]().
		AddNode("ask", func(ctx context.Context, s docState) (docState, error) {
			out, err := magen.Ask[draftResult](ctx, magen.Guidance{Task: "write"})
			s.Draft = out.Text
			return s, err
		}).
		AddNode("slow", func(ctx context.Context, s docState) (docState, error) {
			slowRuns.Store(s.Draft, true)
			entered <- struct{}{}
			<-release
			return s, nil
		}).
		AddEdge(magen.Start, "ask").AddEdge("ask", "slow").AddEdge("slow", magen.End)
	o := mustNew(t, g)
	c := mcpClient(t, o.Register)
	first := decode(t, callTool(t, c, tool, args(nil, magen.StateData{})))

	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args(map[string]any{"text": "a"}, first.StateData)
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			res = mcp.NewToolResultError(err.Error())
		}
		done <- res
	}()
	<-entered
	// The first call is inside the slow node: a second call must not run.
	busy := callTool(t, c, tool, args(map[string]any{"text": "b"}, first.StateData))
	if !busy.IsError || !strings.Contains(text(busy), "busy") {
		t.Errorf("concurrent call = %q, want a busy tool error", text(busy))
	}
	close(release)
	r := decode(t, <-done)
	if r.Status != magen.StatusCompleted {
		t.Errorf("first call = %+v, want completed", r)
	}
	if _, ok := slowRuns.Load("b"); ok {
		t.Errorf("the concurrent call advanced the thread too")
	}
}

func TestConcurrentRetriesRace(t *testing.T) {
	o, n := newDoc(t)
	c := mcpClient(t, o.Register)
	first := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	const callers = 16
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, callers)
	for i := range callers {
		wg.Go(func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = tool
			req.Params.Arguments = args(map[string]any{"text": fmt.Sprint("draft ", i)}, first.StateData)
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				res = mcp.NewToolResultError(err.Error())
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, res := range results {
		if res.IsError && !strings.Contains(text(res), "busy") {
			t.Errorf("caller %d: unexpected error %q", i, text(res))
		}
		if !res.IsError {
			if r := decode(t, res); r.StateData.Seq != 2 || r.Task.NodeID != "review" {
				t.Errorf("caller %d: %+v, want the review task at seq 2", i, r)
			}
		}
	}
	if got := n.review.Load(); got != 1 {
		t.Errorf("review ran %d times, want exactly 1: the thread advanced more than once", got)
	}
	h, _ := o.Checkpointer().History(context.Background(), first.StateData.ThreadID)
	if len(h) != 2 {
		t.Errorf("history has %d checkpoints, want 2", len(h))
	}
}

func TestThreadsRunInParallel(t *testing.T) {
	// Each thread's slow node waits until every thread has entered it: if
	// threads were serialized, this would deadlock.
	const threads = 8
	var wg sync.WaitGroup
	wg.Add(threads)
	g := magen.NewGraph[docState]().
		AddNode("meet", func(ctx context.Context, s docState) (docState, error) {
			wg.Done()
			wg.Wait()
			return s, nil
		}).
		AddEdge(magen.Start, "meet").AddEdge("meet", magen.End)
	o := mustNew(t, g)
	c := mcpClient(t, o.Register)
	var all sync.WaitGroup
	for range threads {
		all.Go(func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = tool
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError {
				t.Errorf("call: %v %v", err, text(res))
			}
		})
	}
	all.Wait()
}

func TestMalformedArguments(t *testing.T) {
	o, n := newDoc(t, magen.WithMaxInputBytes(2048))
	c := mcpClient(t, o.Register)
	valid := decode(t, callTool(t, c, tool, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	sd := map[string]any{"thread_id": valid.StateData.ThreadID, "seq": valid.StateData.Seq}
	tests := []struct {
		name string
		args any
		want string
	}{
		{"arguments are an array", []any{1, 2}, "must be a JSON object"},
		{"arguments are a string", "hello", "must be a JSON object"},
		{"userInput is a string", map[string]any{"userInput": "write it"}, "userInput must be a JSON object, got a string"},
		{"userInput is an array", map[string]any{"userInput": []any{1}}, "userInput must be a JSON object, got an array"},
		{"userInput is a number", map[string]any{"userInput": 3, "workflowStateData": sd}, "got a number"},
		{"workflowStateData is a string", map[string]any{"workflowStateData": "abc"}, "workflowStateData must be an object"},
		{"thread_id is a number", map[string]any{"workflowStateData": map[string]any{"thread_id": 7}}, "thread_id must be a string"},
		{"seq is a string", map[string]any{"workflowStateData": map[string]any{"thread_id": "x", "seq": "1"}}, "seq must be a number"},
		{"seq is negative", map[string]any{"workflowStateData": map[string]any{"thread_id": "x", "seq": -1}}, "at least 0"},
		{"seq without thread", map[string]any{"workflowStateData": map[string]any{"seq": 2}}, "no thread_id"},
		{"initial input of the wrong shape", map[string]any{"userInput": map[string]any{"topic": 5}}, "does not fit the workflow's initial state"},
		{"oversized", map[string]any{"userInput": map[string]any{"text": strings.Repeat("x", 4096)}, "workflowStateData": sd}, "limit is 2048"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, c, tool, tc.args)
			if !res.IsError || res.StructuredContent != nil {
				t.Fatalf("result = %+v, want a tool error", res)
			}
			if !strings.Contains(text(res), tc.want) {
				t.Errorf("error = %q, want it to contain %q", text(res), tc.want)
			}
		})
	}
	// Nothing was lost, and the server still serves.
	r := decode(t, callTool(t, c, tool, args(map[string]any{"text": "ok"}, valid.StateData)))
	if r.StateData.Seq != 2 || n.review.Load() != 1 {
		t.Errorf("after malformed calls: %+v", r)
	}
}

func TestStepLimit(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("spin", func(ctx context.Context, s docState) (docState, error) { s.Revisions++; return s, nil }).
		AddEdge(magen.Start, "spin").
		AddRoute("spin", func(s docState) string { return map[bool]string{true: "done", false: "again"}[s.Revisions > 1e9] },
			magen.Routes{"again": "spin", "done": magen.End})
	o := mustNew(t, g, magen.WithStepLimit(50))
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != magen.StatusFailed || !strings.Contains(r.Error, "step limit") {
		t.Errorf("result = %+v, want failed by the step limit", r)
	}
	s, _, _ := o.State(context.Background(), r.StateData.ThreadID)
	if s.Revisions != 50 {
		t.Errorf("spin ran %d times, want 50", s.Revisions)
	}
}

func TestUnknownRouteOutcomeFails(t *testing.T) {
	g := magen.NewGraph[docState]().
		AddNode("a", func(ctx context.Context, s docState) (docState, error) { return s, nil }).
		AddEdge(magen.Start, "a").
		AddRoute("a", func(docState) string { return "sideways" }, magen.Routes{"up": magen.End})
	o := mustNew(t, g)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != magen.StatusFailed || !strings.Contains(r.Error, `"sideways"`) {
		t.Errorf("result = %+v, want failed naming the outcome", r)
	}
}

func TestSeveralAsksInOneNode(t *testing.T) {
	type nameResult struct {
		Name string `json:"name"`
	}
	type colorResult struct {
		Color string `json:"color"`
	}
	type state struct{ Name, Color string }
	var runs int
	g := magen.NewGraph[state]().
		AddNode("both", func(ctx context.Context, s state) (state, error) {
			runs++
			n, err := magen.Ask[nameResult](ctx, magen.Guidance{Task: "name?"})
			if err != nil {
				return s, err
			}
			c, err := magen.Ask[colorResult](ctx, magen.Guidance{Task: "color?"})
			if err != nil {
				return s, fmt.Errorf("second ask: %w", err) // wrapped interrupts work too
			}
			s.Name, s.Color = n.Name, c.Color
			return s, nil
		}).
		AddEdge(magen.Start, "both").AddEdge("both", magen.End)
	o := mustNew(t, g)
	ctx := context.Background()
	r, err := o.Run(ctx, magen.Input{})
	if err != nil || r.Task.Index != 0 || r.Task.Instructions != "name?" {
		t.Fatalf("first = %+v, %v", r, err)
	}
	r, err = o.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"name":"Ada"}`), StateData: r.StateData})
	if err != nil || r.Task.Index != 1 || r.Task.Instructions != "color?" {
		t.Fatalf("second = %+v, %v", r, err)
	}
	r, err = o.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"color":"blue"}`), StateData: r.StateData})
	if err != nil || r.Status != magen.StatusCompleted {
		t.Fatalf("third = %+v, %v", r, err)
	}
	s, _, _ := o.State(ctx, r.StateData.ThreadID)
	if s != (state{"Ada", "blue"}) || runs != 3 {
		t.Errorf("state %+v after %d runs, want {Ada blue} after 3", s, runs)
	}
}

func TestAskOutsideTurn(t *testing.T) {
	_, err := magen.Ask[draftResult](context.Background(), magen.Guidance{Task: "x"})
	if !errors.Is(err, magen.ErrNotInTurn) {
		t.Errorf("Ask outside a turn = %v, want ErrNotInTurn", err)
	}
	var ie *magen.InterruptError
	if errors.As(err, &ie) {
		t.Errorf("Ask outside a turn returned an interrupt")
	}
}

func TestCanceledContextKeepsCheckpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := magen.NewGraph[docState]().
		AddNode("ask", func(ctx context.Context, s docState) (docState, error) {
			out, err := magen.Ask[draftResult](ctx, magen.Guidance{Task: "write"})
			s.Draft = out.Text
			return s, err
		}).
		AddNode("wait", func(ctx context.Context, s docState) (docState, error) {
			cancel()
			<-ctx.Done()
			return s, ctx.Err()
		}).
		AddEdge(magen.Start, "ask").AddEdge("ask", "wait").AddEdge("wait", magen.End)
	o := mustNew(t, g)
	first, err := o.Run(context.Background(), magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	in := magen.Input{UserInput: json.RawMessage(`{"text":"a"}`), StateData: first.StateData}
	if _, err := o.Run(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a canceled context = %v, want context.Canceled", err)
	}
	cp, err := o.Checkpointer().Load(context.Background(), first.StateData.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != 1 || cp.Status != magen.StatusAwaiting {
		t.Errorf("after cancel: seq %d status %s, want the last checkpoint to stand", cp.Seq, cp.Status)
	}
}
