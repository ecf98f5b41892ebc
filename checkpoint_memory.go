package magen

import (
	"context"
	"fmt"
	"sync"
)

// MemoryCheckpointer keeps checkpoints in process memory. It is meant for
// tests and short-lived servers: everything is lost when the process exits.
// It is safe for concurrent use. Its zero value is not usable; call
// NewMemoryCheckpointer.
type MemoryCheckpointer struct {
	mu      sync.RWMutex
	threads map[string][]*Checkpoint
}

var _ Checkpointer = (*MemoryCheckpointer)(nil)

// NewMemoryCheckpointer returns an empty in-memory store.
func NewMemoryCheckpointer() *MemoryCheckpointer {
	return &MemoryCheckpointer{threads: make(map[string][]*Checkpoint)}
}

// Save implements Checkpointer. It stores a deep copy of cp.
func (m *MemoryCheckpointer) Save(ctx context.Context, cp *Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateForSave(cp); err != nil {
		return err
	}
	c := cp.clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.threads[cp.ThreadID]
	var latest int64
	if len(h) > 0 {
		latest = h[len(h)-1].Seq
	}
	if cp.Parent != latest {
		return fmt.Errorf("save thread %q: parent %d, latest %d: %w", cp.ThreadID, cp.Parent, latest, ErrConflict)
	}
	m.threads[cp.ThreadID] = append(h, c)
	return nil
}

// Load implements Checkpointer. It returns a copy the caller may modify.
func (m *MemoryCheckpointer) Load(ctx context.Context, threadID string) (*Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	h := m.threads[threadID]
	var last *Checkpoint
	if len(h) > 0 {
		last = h[len(h)-1]
	}
	m.mu.RUnlock()
	if last == nil {
		return nil, fmt.Errorf("load thread %q: %w", threadID, ErrThreadNotFound)
	}
	return last.clone(), nil
}

// History implements Checkpointer.
func (m *MemoryCheckpointer) History(ctx context.Context, threadID string) ([]*Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	h := m.threads[threadID]
	if len(h) == 0 {
		return nil, fmt.Errorf("history of thread %q: %w", threadID, ErrThreadNotFound)
	}
	out := make([]*Checkpoint, len(h))
	for i, c := range h {
		out[i] = c.clone()
	}
	return out, nil
}

// Delete implements Checkpointer.
func (m *MemoryCheckpointer) Delete(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.threads, threadID)
	m.mu.Unlock()
	return nil
}

// validateForSave rejects checkpoints no store should accept.
func validateForSave(cp *Checkpoint) error {
	switch {
	case cp == nil:
		return fmt.Errorf("save: nil checkpoint: %w", ErrInvalidCheckpoint)
	case cp.ThreadID == "":
		return fmt.Errorf("save: empty thread id: %w", ErrInvalidCheckpoint)
	case cp.Parent < 0 || cp.Seq != cp.Parent+1:
		return fmt.Errorf("save thread %q: seq %d does not follow parent %d: %w", cp.ThreadID, cp.Seq, cp.Parent, ErrInvalidCheckpoint)
	}
	return nil
}
