package magen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// TaskKind says how the LLM carries out a task.
type TaskKind string

// The kinds of task.
const (
	// KindGuidance is a task the LLM does itself, from the prompt the
	// orchestrator returns (direct guidance, see Ask).
	KindGuidance TaskKind = "guidance"
	// KindDelegate is a task the LLM carries out by calling another MCP
	// tool, whose result tells it how to call the orchestrator back (see
	// Delegate).
	KindDelegate TaskKind = "delegate"
)

// Task is a request for the LLM, raised by Ask or Delegate. It is saved in
// the checkpoint while the thread waits, and returned to programs in the
// tool's structured content.
type Task struct {
	// NodeID is the name of the node that asked.
	NodeID string `json:"nodeId"`
	// Index is the position of this request among the node's Ask and
	// Delegate calls, from 0.
	Index int      `json:"index"`
	Kind  TaskKind `json:"kind"`
	// Instructions is the task text (for KindDelegate, an optional note).
	Instructions string `json:"instructions,omitempty"`
	// Tool and ToolInput name the MCP tool to call, for KindDelegate.
	Tool      string          `json:"tool,omitempty"`
	ToolInput json.RawMessage `json:"toolInput,omitempty"`
	// Example is an example result, if the node gave one.
	Example json.RawMessage `json:"example,omitempty"`
	// ResultSchema is the JSON schema (draft-07) the result must match.
	ResultSchema json.RawMessage `json:"resultSchema"`
}

func (t Task) clone() Task {
	t.ToolInput = cloneRaw(t.ToolInput)
	t.Example = cloneRaw(t.Example)
	t.ResultSchema = cloneRaw(t.ResultSchema)
	return t
}

// Guidance is a task for the LLM to do itself (direct guidance mode).
type Guidance struct {
	// Task tells the LLM what to do. It is required.
	Task string
	// Example is an optional example result. It helps the LLM match the
	// schema; it is marshalled with encoding/json.
	Example any
	// Schema is the draft-07 JSON schema of the result. When nil it is
	// derived from the result type of Ask. It must describe an object.
	Schema json.RawMessage
}

// Delegation is a task the LLM carries out by calling another MCP tool
// (delegate mode). That tool's result must end with instructions to call the
// orchestrator back; Orchestrator.DelegatedResult builds such a result.
type Delegation struct {
	// Tool is the name of the MCP tool to call. It is required.
	Tool string
	// Input is the tool's arguments, marshalled to a JSON object. The
	// orchestrator adds workflowStateData to it.
	Input any
	// Note is optional context for the LLM about why the tool is called.
	Note string
	// Schema is the draft-07 JSON schema of the result. When nil it is
	// derived from the result type of Delegate.
	Schema json.RawMessage
}

// InterruptError is the error Ask and Delegate return when the graph must
// pause for the LLM. It is an outcome, not a failure: the node returns it
// (wrapped or not), and the orchestrator saves a checkpoint and returns the
// task's prompt. Find it with errors.As.
type InterruptError struct {
	Task Task
}

func (e *InterruptError) Error() string {
	return fmt.Sprintf("magen: interrupted: node %q waits for the LLM (task %d, %s)", e.Task.NodeID, e.Task.Index, e.Task.Kind)
}

// turnKey is the context key of the running turn.
type turnKey struct{}

// turn is what Ask needs to know about the node it runs in.
type turn struct {
	node    string
	resumes []json.RawMessage // answers already given, in Ask order
	next    int               // index of the next Ask
	pending *Task             // the first task raised in this run of the node
	// fresh is the index in resumes of the answer this turn brought, or -1.
	// If that answer cannot be decoded, rejected says why, and the turn
	// rejects the answer instead of failing the thread.
	fresh    int
	rejected *FieldError
}

// Ask hands a task to the LLM and returns its answer, decoded into T.
//
// The first time it runs, Ask returns a zero T and an *InterruptError. The
// node must return that error; the orchestrator then saves a checkpoint and
// replies with the task's prompt. When the LLM answers, the answer is
// validated against the result schema, and the node runs again from its
// start with the same input state. This time Ask returns the answer.
//
// So code before Ask runs again on resume: keep it free of side effects, or
// make them idempotent, or move them into a node of their own. Several
// calls to Ask (and Delegate) in one node are matched to answers by their
// order, which must therefore not depend on anything but the node's state.
//
// The result schema is derived from T unless g.Schema is set. T should be a
// struct or a map: the LLM answers with a JSON object.
func Ask[T any](ctx context.Context, g Guidance) (T, error) {
	var zero T
	if g.Task == "" {
		return zero, fmt.Errorf("magen: Ask: guidance has no task text")
	}
	return interrupt[T](ctx, g.Schema, g.Example, Task{Kind: KindGuidance, Instructions: g.Task})
}

// Delegate hands a task to the LLM by asking it to call another MCP tool,
// and returns the result the LLM sends back, decoded into T. It behaves
// like Ask in every other way, including re-running the node on resume.
func Delegate[T any](ctx context.Context, d Delegation) (T, error) {
	var zero T
	if d.Tool == "" {
		return zero, fmt.Errorf("magen: Delegate: no tool name")
	}
	input := json.RawMessage(`{}`)
	if d.Input != nil {
		b, err := marshalText(d.Input)
		if err != nil {
			return zero, fmt.Errorf("magen: Delegate to %q: marshal input: %w", d.Tool, err)
		}
		if len(b) == 0 || b[0] != '{' {
			return zero, fmt.Errorf("magen: Delegate to %q: input must marshal to a JSON object, got %.40s", d.Tool, b)
		}
		input = b
	}
	return interrupt[T](ctx, d.Schema, nil, Task{Kind: KindDelegate, Instructions: d.Note, Tool: d.Tool, ToolInput: input})
}

func interrupt[T any](ctx context.Context, schema json.RawMessage, example any, task Task) (T, error) {
	var zero T
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		return zero, ErrNotInTurn
	}
	i := t.next
	t.next++
	if i < len(t.resumes) {
		var v T
		if err := json.Unmarshal(t.resumes[i], &v); err != nil {
			if i == t.fresh && t.rejected == nil {
				t.rejected = &FieldError{Field: "(root)", Problem: "does not fit the expected result: " + err.Error()}
			}
			return zero, fmt.Errorf("magen: node %q: decode answer %d into %T: %w", t.node, i, v, err)
		}
		return v, nil
	}
	if schema == nil {
		var err error
		if schema, err = schemaForType(reflect.TypeFor[T]()); err != nil {
			return zero, fmt.Errorf("magen: node %q: %w", t.node, err)
		}
	} else if _, err := compileSchema(schema); err != nil {
		return zero, fmt.Errorf("magen: node %q: result schema: %w", t.node, err)
	}
	if example != nil {
		b, err := marshalText(example)
		if err != nil {
			return zero, fmt.Errorf("magen: node %q: marshal example: %w", t.node, err)
		}
		task.Example = b
	}
	task.NodeID = t.node
	task.Index = i
	task.ResultSchema = schema
	if t.pending == nil {
		t.pending = &task
	}
	return zero, &InterruptError{Task: task}
}

// marshalText is json.Marshal without HTML escaping: text the LLM reads
// keeps its <, > and &.
func marshalText(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
