package magen

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrThreadNotFound is returned when a call names a thread_id that the
	// store does not hold. magen never starts a new workflow under a
	// caller-supplied id.
	ErrThreadNotFound = errors.New("magen: thread not found")

	// ErrConflict is returned by Checkpointer.Save when the thread moved on
	// since the checkpoint's parent was read, and by a turn that lost that
	// race: another call advanced the thread first.
	ErrConflict = errors.New("magen: thread advanced by another call")

	// ErrThreadBusy is returned when another call on the same thread is
	// still running in this process.
	ErrThreadBusy = errors.New("magen: thread is busy with another call")

	// ErrInvalidInput is wrapped by every error about malformed tool
	// arguments: wrong types, missing fields, a non-object userInput.
	ErrInvalidInput = errors.New("magen: invalid input")

	// ErrInputTooLarge is returned when the tool arguments exceed the limit
	// set by WithMaxInputBytes.
	ErrInputTooLarge = errors.New("magen: input too large")

	// ErrStaleState is returned when workflowStateData names a checkpoint
	// the thread never had (a sequence number from the future).
	ErrStaleState = errors.New("magen: workflowStateData does not match the thread")

	// ErrStepLimit is the failure recorded when a turn runs more nodes than
	// the limit set by WithStepLimit, which usually means an endless loop.
	ErrStepLimit = errors.New("magen: step limit reached")

	// ErrNotInTurn is returned by Ask and Delegate when they are called with
	// a context that did not come from a running orchestrator turn.
	ErrNotInTurn = errors.New("magen: Ask called outside a workflow turn")

	// ErrInvalidCheckpoint is returned by Checkpointer.Save for a checkpoint
	// that no store should accept, such as one with no thread id.
	ErrInvalidCheckpoint = errors.New("magen: invalid checkpoint")

	// ErrSchemaVersion is returned when a checkpoint store was written by a
	// newer magen, whose schema this version does not know. Older stores are
	// migrated forward when they are opened.
	ErrSchemaVersion = errors.New("magen: checkpoint store was written by a newer magen")

	// ErrInvalidGraph is wrapped by every graph validation error.
	ErrInvalidGraph = errors.New("magen: invalid graph")

	// ErrInputIncomplete is the failure recorded when an Inputs block asked
	// the user MaxRounds times and required properties are still missing.
	ErrInputIncomplete = errors.New("magen: required input still missing")

	// ErrInvalidOption is wrapped by every error about a bad option value.
	ErrInvalidOption = errors.New("magen: invalid option")
)

// NodeError is a graph validation error about one node.
type NodeError struct {
	Node string // the node's name
	Err  error  // what is wrong; wraps ErrInvalidGraph
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %q: %v", e.Node, e.Err) }
func (e *NodeError) Unwrap() error { return e.Err }

// FieldError is one reason a result failed its schema.
type FieldError struct {
	// Field is the path of the offending value, such as "items.0.name", or
	// "(root)" for the result as a whole.
	Field string `json:"field"`
	// Problem says what is wrong, in words meant for the LLM.
	Problem string `json:"problem"`
}

// InvalidResultError is returned by a turn whose userInput fails the
// pending task's result schema. The thread does not advance.
type InvalidResultError struct {
	ThreadID string
	Task     Task
	Problems []FieldError
	// Prompt is the invalid-result prompt built for the LLM, naming each
	// problem and repeating the exact call to make.
	Prompt string
}

func (e *InvalidResultError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "magen: result for task %q does not match its schema: ", e.Task.NodeID)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Field)
		b.WriteString(": ")
		b.WriteString(p.Problem)
	}
	return b.String()
}

// Unwrap returns ErrInvalidInput.
func (e *InvalidResultError) Unwrap() error { return ErrInvalidInput }
