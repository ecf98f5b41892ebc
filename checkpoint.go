package magen

import (
	"context"
	"encoding/json"
	"time"
)

// Status is the state of a thread. Checkpoints record it, and every tool
// result reports it.
type Status string

// The statuses of a thread.
const (
	// StatusAwaiting means the graph is paused, waiting for the LLM to
	// answer the pending task.
	StatusAwaiting Status = "awaiting_result"
	// StatusCompleted means the graph reached End.
	StatusCompleted Status = "completed"
	// StatusFailed means a node returned an error. The state before that
	// node stays in the checkpoint for inspection.
	StatusFailed Status = "failed"
	// StatusRunning marks a checkpoint taken while the graph was still
	// moving. magen commits one checkpoint per turn, so it writes none; a
	// thread found in it resumes from its Next node.
	StatusRunning Status = "running"
)

// Final reports whether no further turn can change the thread.
func (s Status) Final() bool { return s == StatusCompleted || s == StatusFailed }

// Checkpoint is one committed step of a thread. Each turn that advances a
// thread commits exactly one checkpoint whose Parent is the sequence number
// of the checkpoint it continued from.
//
// Checkpoints hold JSON, not Go values, so that Checkpointer stays
// non-generic and any store can hold any graph's state.
type Checkpoint struct {
	ThreadID string    `json:"threadId"`
	Seq      int64     `json:"seq"`    // 1 for a thread's first checkpoint, then +1 per turn
	Parent   int64     `json:"parent"` // Seq of the previous checkpoint, 0 for the first
	Time     time.Time `json:"time"`
	Status   Status    `json:"status"`
	// Next names the node(s) that run when the thread resumes. For an
	// interrupted thread it is the node that asked; it runs again from its
	// start.
	Next []string `json:"next,omitempty"`
	// Pending holds the tasks the LLM must answer before the thread can
	// resume, each with its result schema.
	Pending []Task `json:"pending,omitempty"`
	// Resumes holds the answers already given to the node in Next, in the
	// order of its Ask calls.
	Resumes []json.RawMessage `json:"resumes,omitempty"`
	// State is the graph state as JSON: for an interrupted thread, the state
	// the node in Next receives when it runs again.
	State json.RawMessage `json:"state"`
	// Error is the failure text of a failed thread.
	Error string `json:"error,omitempty"`
}

// clone returns a deep copy, so that stores never share memory with callers.
func (c *Checkpoint) clone() *Checkpoint {
	d := *c
	d.Next = append([]string(nil), c.Next...)
	if c.Pending != nil {
		d.Pending = make([]Task, len(c.Pending))
		for i, t := range c.Pending {
			d.Pending[i] = t.clone()
		}
	}
	if c.Resumes != nil {
		d.Resumes = make([]json.RawMessage, len(c.Resumes))
		for i, r := range c.Resumes {
			d.Resumes[i] = cloneRaw(r)
		}
	}
	d.State = cloneRaw(c.State)
	return &d
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// Checkpointer stores checkpoints. Implementations must be safe for
// concurrent use, and must pass the conformance suite in package magentest.
//
// Save is a conditional write: it commits cp only if cp.Parent is the
// sequence number of the thread's latest checkpoint (0 for a thread that has
// none). Otherwise it returns an error wrapping ErrConflict and changes
// nothing. This is what keeps two servers that share one store from both
// advancing a thread.
type Checkpointer interface {
	// Save commits cp as the thread's new latest checkpoint.
	Save(ctx context.Context, cp *Checkpoint) error
	// Load returns the thread's latest checkpoint, or an error wrapping
	// ErrThreadNotFound.
	Load(ctx context.Context, threadID string) (*Checkpoint, error)
	// History returns the thread's checkpoints, oldest first, or an error
	// wrapping ErrThreadNotFound.
	History(ctx context.Context, threadID string) ([]*Checkpoint, error)
	// Delete removes every checkpoint of the thread. Deleting an unknown
	// thread is not an error.
	Delete(ctx context.Context, threadID string) error
}
