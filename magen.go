// Package magen runs deterministic, typed workflow graphs behind a single MCP
// tool, the orchestrator, and hands the steps that need judgement to the LLM
// on the other end of the connection.
//
// A node that needs the LLM calls Ask (or Delegate). The graph pauses, a
// checkpoint is saved, and the tool returns a prompt that tells the LLM the
// task, the JSON schema of the answer, and the exact call that resumes the
// workflow. When the LLM calls back with its answer and the opaque
// workflowStateData, the answer is validated and the graph resumes.
//
//	type State struct{ Topic, Summary string }
//
//	g := magen.NewGraph[State]().
//		AddNode("summarize", func(ctx context.Context, s State) (State, error) {
//			out, err := magen.Ask[struct{ Summary string }](ctx, magen.Guidance{
//				Task: "Summarize " + s.Topic + " in one sentence.",
//			})
//			if err != nil {
//				return s, err
//			}
//			s.Summary = out.Summary
//			return s, nil
//		}).
//		AddEdge(magen.Start, "summarize").
//		AddEdge("summarize", magen.End)
//
//	orch, err := magen.New(g, magen.WithToolID("summarizer"))
//	if err != nil { ... }
//	orch.Register(mcpServer)
package magen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Orchestrator runs one graph as an MCP tool. It is safe for concurrent use:
// calls on different threads run in parallel, and a call on a thread that
// another call is still running on is rejected with ErrThreadBusy.
type Orchestrator[S any] struct {
	cfg   config
	graph *compiledGraph[S]
	store Checkpointer
	log   *slog.Logger
	init  func(context.Context, json.RawMessage) (S, error)

	mu   sync.Mutex
	busy map[string]struct{} // threads with a call in progress

	closers []io.Closer // what New opened: the default store and log file
}

// StateData is the opaque workflowStateData the LLM sends back on every
// call after the first. ThreadID names the thread; Seq names the checkpoint
// the caller last saw, so that a retried call is recognised and not applied
// twice. A StateData with only a ThreadID is accepted too.
type StateData struct {
	ThreadID string `json:"thread_id"`
	Seq      int64  `json:"seq,omitempty"`
}

// Input is one call to the orchestrator, after the arguments were parsed.
type Input struct {
	// UserInput is the LLM's result for the pending task, or the initial
	// input of a new workflow. If set, it must be a JSON object.
	UserInput json.RawMessage
	// StateData names the thread. Its zero value starts a new workflow.
	StateData StateData
}

// Result is what one call returns: the prompt for the LLM, and the same
// facts in machine-readable form for programs that drive a workflow.
type Result struct {
	// Prompt tells the LLM what to do next.
	Prompt string `json:"orchestrationInstructionsPrompt"`
	// Status is StatusAwaiting, StatusCompleted or StatusFailed.
	Status Status `json:"status"`
	// StateData is the workflowStateData to send back with the next call.
	StateData StateData `json:"workflowStateData"`
	// Task is the pending task when Status is StatusAwaiting.
	Task *Task `json:"task,omitempty"`
	// Error is the failure text when Status is StatusFailed.
	Error string `json:"error,omitempty"`
}

// New validates g and the options and returns an orchestrator for g. It
// reports every graph problem and every bad option at once, joined with
// errors.Join. The orchestrator keeps a snapshot of g: changing g later has
// no effect on it.
func New[S any](g *Graph[S], opts ...Option) (*Orchestrator[S], error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	errs := cfg.errs
	if cfg.checkpointer != nil && len(cfg.sqliteOpts) > 0 {
		errs = append(errs, fmt.Errorf("%w: WithSQLiteOptions configures the default store and cannot be combined with WithCheckpointer", ErrInvalidOption))
	}
	if g == nil {
		errs = append(errs, fmt.Errorf("%w: nil graph", ErrInvalidGraph))
	} else if err := g.Validate(); err != nil {
		errs = append(errs, err)
	}
	init := decodeInitialState[S]
	if cfg.initialState != nil {
		f, ok := cfg.initialState.(func(context.Context, json.RawMessage) (S, error))
		if !ok {
			var s S
			errs = append(errs, fmt.Errorf("%w: WithInitialState: function makes %s, but the graph's state is %T",
				ErrInvalidOption, initialStateType(cfg.initialState), s))
		}
		init = f
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	if cfg.logger == nil || cfg.checkpointer == nil {
		dir, err := stateDir(cfg.dir)
		if err != nil {
			return nil, err
		}
		if cfg.logger == nil {
			l, f, err := openLog(filepath.Join(dir, "workflow_logs.json"))
			if err != nil {
				return nil, err
			}
			cfg.logger = l
			closers = append(closers, f)
		}
		if cfg.checkpointer == nil {
			store, err := OpenSQLite(filepath.Join(dir, "workflow-state.db"), cfg.sqliteOpts...)
			if err != nil {
				closeAll()
				return nil, err
			}
			cfg.checkpointer = store
			closers = append(closers, store)
		}
		// .magen holds the keys to every thread: keep it private even if
		// it was made by hand or by an older tool with looser modes.
		if err := tighten(dir); err != nil {
			closeAll()
			return nil, err
		}
	}
	return &Orchestrator[S]{
		cfg:     cfg,
		graph:   g.compile(),
		store:   cfg.checkpointer,
		log:     cfg.logger,
		init:    init,
		busy:    make(map[string]struct{}),
		closers: closers,
	}, nil
}

// Close releases what New opened: the default checkpoint store and log
// file. It does not close a Checkpointer or logger passed in options.
func (o *Orchestrator[S]) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i].Close())
	}
	o.closers = nil
	return errors.Join(errs...)
}

// tighten makes dir 0700 and the regular files in it 0600.
func tighten(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("magen: secure %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("magen: secure %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o600); err != nil {
				return fmt.Errorf("magen: secure %s: %w", dir, err)
			}
		}
	}
	return nil
}

// stateDir returns <base>/.magen, where base is dir, else $PROJECT_PATH,
// else the home directory.
func stateDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("PROJECT_PATH")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("magen: no directory for .magen: set WithDir or PROJECT_PATH: %w", err)
		}
		dir = home
	}
	return filepath.Join(dir, ".magen"), nil
}

func decodeInitialState[S any](_ context.Context, in json.RawMessage) (S, error) {
	var s S
	if len(in) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(in, &s); err != nil {
		return s, fmt.Errorf("userInput does not fit the workflow's initial state %T: %w", s, err)
	}
	return s, nil
}

// Checkpointer returns the store the orchestrator saves checkpoints in.
func (o *Orchestrator[S]) Checkpointer() Checkpointer { return o.store }

// State returns the thread's current state and status: the state the
// waiting node will receive, the final state of a completed thread, or the
// state before the failing node of a failed one.
func (o *Orchestrator[S]) State(ctx context.Context, threadID string) (S, Status, error) {
	var s S
	cp, err := o.store.Load(ctx, threadID)
	if err != nil {
		return s, "", err
	}
	if err := json.Unmarshal(cp.State, &s); err != nil {
		return s, cp.Status, fmt.Errorf("decode state of thread %q: %w", threadID, err)
	}
	return s, cp.Status, nil
}

// Run runs one turn: it starts a new thread, or resumes the one in
// in.StateData with in.UserInput as the answer to its pending task, and
// runs the graph until the next task, End, or a failure. It is the
// transport-free core of the MCP tool.
//
// A failed workflow is a Result with StatusFailed, not an error. Errors are
// for calls that changed nothing: ErrThreadNotFound, ErrThreadBusy,
// ErrConflict, ErrStaleState, ErrInvalidInput (including
// *InvalidResultError, whose Prompt asks for the task again), or a store or
// context error.
func (o *Orchestrator[S]) Run(ctx context.Context, in Input) (*Result, error) {
	if len(in.UserInput) > 0 && (!isJSONObject(in.UserInput) || !json.Valid(in.UserInput)) {
		return nil, fmt.Errorf("%w: userInput must be one JSON object", ErrInvalidInput)
	}
	ctx = withProgress(ctx, nil, nil, o.log)
	if in.StateData.ThreadID == "" {
		return o.start(ctx, in.UserInput)
	}
	id := in.StateData.ThreadID
	if !o.acquire(id) {
		return nil, fmt.Errorf("thread %q: %w; wait for it to finish, then send this call again unchanged", id, ErrThreadBusy)
	}
	defer o.release(id)

	cp, err := o.store.Load(ctx, id)
	if errors.Is(err, ErrThreadNotFound) {
		return nil, fmt.Errorf("thread %q: %w: check that workflowStateData is copied exactly, or call without workflowStateData to start a new workflow", id, ErrThreadNotFound)
	}
	if err != nil {
		return nil, err
	}
	switch seq := in.StateData.Seq; {
	case seq > cp.Seq:
		return nil, fmt.Errorf("thread %q has no step %d (latest is %d): %w; send workflowStateData exactly as the last result gave it", id, seq, cp.Seq, ErrStaleState)
	case cp.Status.Final(), seq != 0 && seq < cp.Seq && cp.Status == StatusAwaiting:
		// A finished thread, or a retry of a call that was already
		// applied: answer with the current prompt, and run nothing.
		o.log.DebugContext(ctx, "replay", "thread", id, "seq", seq, "latest", cp.Seq, "status", cp.Status)
		return o.result(cp), nil
	}
	var s S
	if err := json.Unmarshal(cp.State, &s); err != nil {
		return nil, fmt.Errorf("decode state of thread %q at step %d: %w", id, cp.Seq, err)
	}
	if cp.Status != StatusAwaiting || len(cp.Pending) == 0 {
		if len(cp.Next) == 0 {
			return nil, fmt.Errorf("thread %q at step %d has no next node: %w", id, cp.Seq, ErrInvalidCheckpoint)
		}
		return o.advance(ctx, cp, id, s, cp.Next[0], cp.Resumes, -1)
	}
	task := cp.Pending[0]
	if err := o.checkResult(cp, task, in.UserInput); err != nil {
		return nil, err
	}
	resumes := make([]json.RawMessage, len(cp.Resumes), len(cp.Resumes)+1)
	copy(resumes, cp.Resumes)
	return o.advance(ctx, cp, id, s, task.NodeID, append(resumes, in.UserInput), len(resumes))
}

// checkResult validates an answer against the pending task's schema.
func (o *Orchestrator[S]) checkResult(cp *Checkpoint, task Task, answer json.RawMessage) error {
	var problems []FieldError
	if len(answer) == 0 {
		problems = []FieldError{{Field: "userInput", Problem: "is missing: send your result for the task as userInput"}}
	} else {
		var err error
		if problems, err = validateResult(task.ResultSchema, answer); err != nil {
			return fmt.Errorf("thread %q: pending task's schema: %w", cp.ThreadID, err)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	p := o.promptContext(cp)
	p.Problems = problems
	return &InvalidResultError{ThreadID: cp.ThreadID, Task: task, Problems: problems, Prompt: o.cfg.prompts.InvalidResult(p)}
}

// start begins a new thread.
func (o *Orchestrator[S]) start(ctx context.Context, userInput json.RawMessage) (*Result, error) {
	s, err := o.init(ctx, userInput)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	id := o.cfg.newID()
	if id == "" {
		return nil, fmt.Errorf("magen: the ID source returned an empty thread id")
	}
	first, err := o.graph.next(Start, s)
	if err != nil {
		return o.fail(ctx, nil, id, s, Start, err)
	}
	o.log.InfoContext(ctx, "thread started", "thread", id)
	if !o.acquire(id) {
		return nil, fmt.Errorf("thread %q: %w", id, ErrThreadBusy)
	}
	defer o.release(id)
	return o.advance(ctx, nil, id, s, first, nil, -1)
}

// advance runs the graph from node until it pauses, ends or fails, and
// commits exactly one checkpoint whose parent is parent (nil for a new
// thread). fresh is the index in resumes of the answer this call brought,
// or -1: if the node cannot decode it, the answer is rejected and nothing
// is committed.
func (o *Orchestrator[S]) advance(ctx context.Context, parent *Checkpoint, id string, s S, node string, resumes []json.RawMessage, fresh int) (*Result, error) {
	began := time.Now()
	for steps := 0; ; steps++ {
		if node == End {
			cp, err := o.commit(ctx, parent, id, s, StatusCompleted, nil, nil, nil, "")
			if err != nil {
				return nil, err
			}
			o.log.InfoContext(ctx, "thread completed", "thread", id, "seq", cp.Seq, "steps", steps, "elapsed", time.Since(began))
			return o.result(cp), nil
		}
		if steps >= o.cfg.stepLimit {
			return o.fail(ctx, parent, id, s, node, fmt.Errorf("%w: %d nodes ran in one turn without pausing; is there an endless loop?", ErrStepLimit, steps))
		}
		fn := o.graph.nodes[node]
		t := &turn{node: node, resumes: resumes, fresh: fresh}
		out, err := runNode(context.WithValue(ctx, turnKey{}, t), fn, s)
		if t.rejected != nil {
			p := o.promptContext(parent)
			p.Problems = []FieldError{*t.rejected}
			return nil, &InvalidResultError{ThreadID: id, Task: *p.Task, Problems: p.Problems, Prompt: o.cfg.prompts.InvalidResult(p)}
		}
		pending := t.pending
		var ie *InterruptError
		if pending == nil && errors.As(err, &ie) {
			ie.Task.NodeID = node
			pending = &ie.Task
		}
		if pending != nil {
			if err == nil {
				o.log.WarnContext(ctx, "node ignored the interrupt from Ask; pausing anyway", "thread", id, "node", node)
			}
			cp, err := o.commit(ctx, parent, id, s, StatusAwaiting, []string{node}, []Task{*pending}, resumes, "")
			if err != nil {
				return nil, err
			}
			o.log.InfoContext(ctx, "thread awaiting result", "thread", id, "seq", cp.Seq, "node", node, "kind", pending.Kind, "steps", steps, "elapsed", time.Since(began))
			return o.result(cp), nil
		}
		if err != nil {
			if ctx.Err() != nil {
				// The caller went away: keep the last checkpoint, so that
				// a retry runs this turn again.
				return nil, fmt.Errorf("node %q: %w", node, ctx.Err())
			}
			return o.fail(ctx, parent, id, s, node, err)
		}
		s, resumes, fresh = out, nil, -1
		next, err := o.graph.next(node, s)
		if err != nil {
			return o.fail(ctx, parent, id, s, node, err)
		}
		node = next
	}
}

// runNode runs one node and turns a panic into an error, so that a bad
// node fails its thread instead of the server.
func runNode[S any](ctx context.Context, fn NodeFunc[S], s S) (out S, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn(ctx, s)
}

// fail commits a failed checkpoint and returns the failure result.
func (o *Orchestrator[S]) fail(ctx context.Context, parent *Checkpoint, id string, s S, node string, cause error) (*Result, error) {
	msg := fmt.Sprintf("node %q: %v", node, cause)
	cp, err := o.commit(ctx, parent, id, s, StatusFailed, []string{node}, nil, nil, msg)
	if err != nil {
		return nil, err
	}
	o.log.WarnContext(ctx, "thread failed", "thread", id, "seq", cp.Seq, "node", node, "error", cause)
	return o.result(cp), nil
}

func (o *Orchestrator[S]) commit(ctx context.Context, parent *Checkpoint, id string, s S, status Status, next []string, pending []Task, resumes []json.RawMessage, errText string) (*Checkpoint, error) {
	state, err := json.Marshal(s)
	if err != nil {
		// The state cannot be saved: fail the thread, keeping the last
		// state that could be, rather than leave it to fail on every retry.
		status, pending, resumes = StatusFailed, nil, nil
		if errText != "" {
			errText += "; "
		}
		errText += fmt.Sprintf("the workflow state cannot be saved as JSON: %v", err)
		state = json.RawMessage("null")
		if parent != nil {
			state = parent.State
		}
	}
	cp := &Checkpoint{
		ThreadID: id,
		Seq:      1,
		Time:     o.cfg.clock().UTC(),
		Status:   status,
		Next:     next,
		Pending:  pending,
		Resumes:  resumes,
		State:    state,
		Error:    errText,
	}
	if parent != nil {
		cp.Parent, cp.Seq = parent.Seq, parent.Seq+1
	}
	if err := o.store.Save(ctx, cp); err != nil {
		if errors.Is(err, ErrConflict) && parent == nil {
			return nil, fmt.Errorf("new thread %q: the ID source returned an id already in use: %w", id, ErrConflict)
		}
		if errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("thread %q: %w; call again with the same arguments to get the current task", id, ErrConflict)
		}
		return nil, fmt.Errorf("thread %q: save checkpoint: %w", id, err)
	}
	return cp, nil
}

// result builds the answer for a thread's latest checkpoint.
func (o *Orchestrator[S]) result(cp *Checkpoint) *Result {
	p := o.promptContext(cp)
	r := &Result{Status: cp.Status, StateData: p.StateData}
	switch cp.Status {
	case StatusCompleted:
		r.Prompt = o.cfg.prompts.Completed(p)
	case StatusFailed:
		r.Error = cp.Error
		r.Prompt = o.cfg.prompts.Failed(p)
	default:
		r.Task = p.Task
		if r.Task.Kind == KindDelegate {
			r.Prompt = o.cfg.prompts.Delegate(p)
		} else {
			r.Prompt = o.cfg.prompts.Guidance(p)
		}
	}
	return r
}

func (o *Orchestrator[S]) promptContext(cp *Checkpoint) PromptContext {
	p := PromptContext{
		ToolID:    o.cfg.toolID,
		Title:     o.cfg.title,
		StateData: StateData{ThreadID: cp.ThreadID, Seq: cp.Seq},
		Error:     cp.Error,
		State:     cp.State,
	}
	if len(cp.Pending) > 0 {
		p.Task = &cp.Pending[0]
	}
	return p
}

func (o *Orchestrator[S]) acquire(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.busy[id]; ok {
		return false
	}
	o.busy[id] = struct{}{}
	return true
}

func (o *Orchestrator[S]) release(id string) {
	o.mu.Lock()
	delete(o.busy, id)
	o.mu.Unlock()
}

func isJSONObject(raw json.RawMessage) bool { return jsonKind(raw) == "an object" }
