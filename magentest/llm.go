package magentest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/magen-go/magen"
)

// Prompt is one tool result the fake LLM read.
type Prompt struct {
	Call    int          // 1-based number of the tool call that returned it
	Status  magen.Status // empty for a tool error
	Task    *magen.Task  // the pending task, when Status is StatusAwaiting
	Text    string       // the text the LLM reads
	IsError bool         // the call was rejected (isError)
	// Tool is the delegated tool that returned this prompt (see
	// magen.Delegate), or "" for the orchestrator.
	Tool string
}

// Node returns the node of the pending task, or "" if there is none.
func (p Prompt) Node() string {
	if p.Task == nil {
		return ""
	}
	return p.Task.NodeID
}

// Turn is one scripted answer of the fake LLM. Build turns with Answer,
// Invalid and Reply, which record where they were written.
type Turn struct {
	node    string // expected task node; "" accepts any
	answer  any
	reply   func(Prompt) (any, error)
	invalid bool
	where   string // file:line of the constructor's caller
}

// Answer scripts a turn that expects a task from node (any node if "")
// and answers it with v, marshalled to JSON.
func Answer(node string, v any) Turn {
	return Turn{node: node, answer: v, where: caller()}
}

// Invalid scripts a turn that answers the task from node with v, which the
// orchestrator must reject as not matching the result schema. The next turn
// then answers the same task again.
func Invalid(node string, v any) Turn {
	return Turn{node: node, answer: v, invalid: true, where: caller()}
}

// Reply scripts a turn whose answer is computed from the prompt and its
// task. An error from f fails the run.
func Reply(node string, f func(p Prompt) (any, error)) Turn {
	return Turn{node: node, reply: f, where: caller()}
}

// Where returns the file:line where the turn was scripted.
func (t Turn) Where() string { return t.where }

func caller() string {
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return "unknown"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// LLM is a scripted fake LLM. It answers each task with the next scripted
// turn, records every prompt it reads, and reports unexpected and leftover
// turns through Err. It is safe for concurrent use, though a script is
// naturally sequential.
type LLM struct {
	mu      sync.Mutex
	answer  func(Prompt) (any, error) // set by NewLLMFunc
	turns   []Turn
	next    int
	prompts []Prompt
	errs    []error
}

// NewLLM returns a fake LLM that answers with turns, in order.
func NewLLM(turns ...Turn) *LLM {
	return &LLM{turns: turns}
}

// NewLLMFunc returns a fake LLM that answers every task with f, with no
// script: for demos and for workflows whose turns are not known in
// advance. An error from f fails the run.
func NewLLMFunc(f func(p Prompt) (any, error)) *LLM {
	return &LLM{answer: f}
}

// Respond records p and returns the next scripted answer as JSON, with the
// turn it came from. It fails when the script is exhausted, when the task
// comes from another node than the turn expects, or when the answer cannot
// be built. Failures are also kept for Err.
func (l *LLM) Respond(p Prompt) (json.RawMessage, Turn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prompts = append(l.prompts, p)
	if l.answer != nil {
		t := Turn{node: p.Node(), reply: l.answer, where: "NewLLMFunc"}
		raw, err := t.build(p)
		if err != nil {
			return nil, t, l.fail(fmt.Errorf("call %d: %w", p.Call, err))
		}
		return raw, t, nil
	}
	if l.next >= len(l.turns) {
		return nil, Turn{}, l.fail(fmt.Errorf("unexpected task from node %q at call %d: the script has no turn left", p.Node(), p.Call))
	}
	t := l.turns[l.next]
	l.next++
	if t.node != "" && t.node != p.Node() {
		return nil, t, l.fail(fmt.Errorf("%s: turn %d expects a task from node %q, got one from node %q at call %d", t.where, l.next, t.node, p.Node(), p.Call))
	}
	raw, err := t.build(p)
	if err != nil {
		return nil, t, l.fail(fmt.Errorf("%s: turn %d: %w", t.where, l.next, err))
	}
	return raw, t, nil
}

// build returns the turn's answer to p as JSON.
func (t Turn) build(p Prompt) (json.RawMessage, error) {
	v := t.answer
	if t.reply != nil {
		var err error
		if v, err = t.reply(p); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal answer: %w", err)
	}
	return raw, nil
}

// Observe records a prompt that needs no answer, such as the final message.
func (l *LLM) Observe(p Prompt) {
	l.mu.Lock()
	l.prompts = append(l.prompts, p)
	l.mu.Unlock()
}

func (l *LLM) fail(err error) error {
	l.errs = append(l.errs, err)
	return err
}

// Prompts returns every prompt the LLM read, in order.
func (l *LLM) Prompts() []Prompt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Prompt(nil), l.prompts...)
}

// Err reports every unexpected turn, and the turns left over, joined. It is
// nil when the script was followed exactly.
func (l *LLM) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := append([]error(nil), l.errs...)
	if left := len(l.turns) - l.next; left > 0 {
		errs = append(errs, fmt.Errorf("%d scripted turn(s) left over, the first at %s (expecting node %q)", left, l.turns[l.next].where, l.turns[l.next].node))
	}
	return errors.Join(errs...)
}
