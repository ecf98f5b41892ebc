package magentest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

func openSQLiteStore(t testing.TB, opts ...magen.SQLiteOption) *magen.SQLiteCheckpointer {
	t.Helper()
	s, err := magen.OpenSQLite(filepath.Join(t.TempDir(), ".magen", "workflow-state.db"), opts...)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRunCheckpointerTests(t *testing.T) {
	for _, tc := range []struct {
		name     string
		newStore func(t testing.TB) magen.Checkpointer
	}{
		{"memory", func(testing.TB) magen.Checkpointer { return magen.NewMemoryCheckpointer() }},
		{"sqlite", func(t testing.TB) magen.Checkpointer { return openSQLiteStore(t) }},
		{"sqlite/normal/keep-last-100", func(t testing.TB) magen.Checkpointer {
			return openSQLiteStore(t, magen.WithDurability(magen.DurabilityNormal), magen.WithKeepLast(100))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { magentest.RunCheckpointerTests(t, tc.newStore) })
	}
}

func TestTestCheckpointer(t *testing.T) {
	dir := t.TempDir()
	var n int
	for _, tc := range []struct {
		name     string
		newStore func() (magen.Checkpointer, error)
	}{
		{"memory", func() (magen.Checkpointer, error) { return magen.NewMemoryCheckpointer(), nil }},
		{"sqlite", func() (magen.Checkpointer, error) {
			n++
			return magen.OpenSQLite(filepath.Join(dir, fmt.Sprintf("%d.db", n)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := magentest.TestCheckpointer(t.Context(), tc.newStore); err != nil {
				t.Errorf("TestCheckpointer = %v, want nil", err)
			}
		})
	}
}

// TestTestCheckpointerCatchesBrokenStores proves the suite can fail: each
// broken store must be caught by the check named.
func TestTestCheckpointerCatchesBrokenStores(t *testing.T) {
	for _, tc := range []struct {
		name      string
		newStore  func() magen.Checkpointer
		wantCheck string
	}{
		{"ignores the conditional write", func() magen.Checkpointer { return &naiveStore{noConflict: true} }, "Conflict"},
		{"checks the parent outside the lock", func() magen.Checkpointer { return &naiveStore{racy: true} }, "ConcurrentSameThread"},
		{"shares memory with callers", func() magen.Checkpointer { return &naiveStore{shared: true} }, "NoSharedMemory"},
		{"returns history newest first", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.history = func(h []*magen.Checkpoint) ([]*magen.Checkpoint, error) {
					slices.Reverse(h)
					return h, nil
				}
			})
		}, "History"},
		{"keeps time to the second", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.save = func(cp *magen.Checkpoint) error { cp.Time = cp.Time.Truncate(time.Second); return nil }
			})
		}, "SaveLoad"},
		{"folds the case of thread ids", func() magen.Checkpointer {
			return broken(func(b *brokenStore) { b.id = strings.ToLower })
		}, "UnknownThread"},
		{"reports unknown threads without ErrThreadNotFound", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.loadErr = func(err error) error {
					if errors.Is(err, magen.ErrThreadNotFound) {
						return errors.New("no such thread")
					}
					return err
				}
			})
		}, "UnknownThread"},
		{"fails to delete unknown threads", func() magen.Checkpointer {
			return broken(func(b *brokenStore) { b.deleteUnknownFails = true })
		}, "Delete"},
		{"loses big numbers", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.save = func(cp *magen.Checkpoint) error {
					if len(cp.State) > 1<<16 {
						return nil // only small states, to keep the test quick
					}
					var v any
					if err := json.Unmarshal(cp.State, &v); err != nil {
						return err
					}
					cp.State, _ = json.Marshal(v)
					return nil
				}
			})
		}, "UnusualCharacters"},
		{"drops NUL from error text", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.save = func(cp *magen.Checkpoint) error { cp.Error = strings.ReplaceAll(cp.Error, "\x00", ""); return nil }
			})
		}, "UnusualCharacters"},
		{"truncates large states", func() magen.Checkpointer {
			return broken(func(b *brokenStore) {
				b.save = func(cp *magen.Checkpoint) error {
					if len(cp.State) > 1<<20 {
						cp.State = cp.State[:1<<20]
					}
					return nil
				}
			})
		}, "LargeState"},
		{"panics on a nil checkpoint", func() magen.Checkpointer {
			return broken(func(b *brokenStore) { b.panicOnNil = true })
		}, "InvalidCheckpoint"},
		{"accepts an empty thread id", func() magen.Checkpointer {
			return &naiveStore{noValidate: true}
		}, "InvalidCheckpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := magentest.TestCheckpointer(t.Context(), func() (magen.Checkpointer, error) { return tc.newStore(), nil })
			if err == nil {
				t.Fatalf("TestCheckpointer = nil, want a violation of check %s", tc.wantCheck)
			}
			if want := "check " + tc.wantCheck + ":"; !strings.Contains(err.Error(), want) {
				t.Errorf("TestCheckpointer = %v\nwant a violation naming %q", err, want)
			}
		})
	}
}

// cpRecorder is a testing.TB that is not a *testing.T, so that
// RunCheckpointerTests takes its plain path, and that records failures
// instead of reporting them.
type cpRecorder struct {
	*testing.T
	mu     sync.Mutex
	errors []string
}

func (r *cpRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *cpRecorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func TestRunCheckpointerTestsReports(t *testing.T) {
	r := &cpRecorder{T: t}
	magentest.RunCheckpointerTests(r, func(testing.TB) magen.Checkpointer { return &naiveStore{noConflict: true} })
	if !slices.ContainsFunc(r.errors, func(s string) bool { return strings.HasPrefix(s, "check Conflict:") }) {
		t.Errorf("RunCheckpointerTests reported %q, want a failure of check Conflict", r.errors)
	}
	r = &cpRecorder{T: t}
	magentest.RunCheckpointerTests(r, func(testing.TB) magen.Checkpointer { return magen.NewMemoryCheckpointer() })
	if len(r.errors) > 0 {
		t.Errorf("RunCheckpointerTests on the memory store reported %q, want nothing", r.errors)
	}
}

// brokenStore is a memory store with one fault injected.
type brokenStore struct {
	mem                *magen.MemoryCheckpointer
	save               func(cp *magen.Checkpoint) error
	history            func([]*magen.Checkpoint) ([]*magen.Checkpoint, error)
	id                 func(string) string
	loadErr            func(error) error
	deleteUnknownFails bool
	panicOnNil         bool
}

func broken(f func(*brokenStore)) *brokenStore {
	b := &brokenStore{
		mem:     magen.NewMemoryCheckpointer(),
		save:    func(*magen.Checkpoint) error { return nil },
		history: func(h []*magen.Checkpoint) ([]*magen.Checkpoint, error) { return h, nil },
		id:      func(s string) string { return s },
		loadErr: func(err error) error { return err },
	}
	f(b)
	return b
}

func (b *brokenStore) Save(ctx context.Context, cp *magen.Checkpoint) error {
	if cp == nil {
		if b.panicOnNil {
			panic("nil checkpoint")
		}
		return b.mem.Save(ctx, nil)
	}
	if err := b.save(cp); err != nil {
		return err
	}
	c := *cp
	c.ThreadID = b.id(c.ThreadID)
	return b.mem.Save(ctx, &c)
}

func (b *brokenStore) Load(ctx context.Context, id string) (*magen.Checkpoint, error) {
	cp, err := b.mem.Load(ctx, b.id(id))
	if err != nil {
		return nil, b.loadErr(err)
	}
	cp.ThreadID = id
	return cp, nil
}

func (b *brokenStore) History(ctx context.Context, id string) ([]*magen.Checkpoint, error) {
	h, err := b.mem.History(ctx, b.id(id))
	if err != nil {
		return nil, b.loadErr(err)
	}
	for _, cp := range h {
		cp.ThreadID = id
	}
	return b.history(h)
}

func (b *brokenStore) Delete(ctx context.Context, id string) error {
	if b.deleteUnknownFails {
		if _, err := b.mem.Load(ctx, id); err != nil {
			return err
		}
	}
	return b.mem.Delete(ctx, b.id(id))
}

// naiveStore is a store written without care for the contract's finer
// points; each flag breaks one.
type naiveStore struct {
	noConflict bool // save whatever the parent
	racy       bool // check the parent, then append under another lock
	shared     bool // keep and return the caller's pointers
	noValidate bool // accept an empty thread id

	mu      sync.RWMutex
	threads map[string][]*magen.Checkpoint
}

func (n *naiveStore) copy(cp *magen.Checkpoint) *magen.Checkpoint {
	if n.shared {
		return cp
	}
	c := *cp
	c.Next = slices.Clone(cp.Next)
	c.Pending = slices.Clone(cp.Pending)
	for i := range c.Pending {
		t := &c.Pending[i]
		t.ToolInput, t.Example, t.ResultSchema = bytes.Clone(t.ToolInput), bytes.Clone(t.Example), bytes.Clone(t.ResultSchema)
	}
	c.Resumes = slices.Clone(cp.Resumes)
	for i := range c.Resumes {
		c.Resumes[i] = bytes.Clone(c.Resumes[i])
	}
	c.State = bytes.Clone(cp.State)
	return &c
}

func (n *naiveStore) Save(ctx context.Context, cp *magen.Checkpoint) error {
	if cp == nil || (!n.noValidate && cp.ThreadID == "") || cp.Seq != cp.Parent+1 {
		return magen.ErrInvalidCheckpoint
	}
	n.mu.RLock()
	h := n.threads[cp.ThreadID]
	var latest int64
	if len(h) > 0 {
		latest = h[len(h)-1].Seq
	}
	n.mu.RUnlock()
	if !n.noConflict && cp.Parent != latest {
		return magen.ErrConflict
	}
	if n.racy {
		time.Sleep(time.Millisecond)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.racy && !n.noConflict && len(n.threads[cp.ThreadID]) != len(h) {
		return magen.ErrConflict
	}
	if n.threads == nil {
		n.threads = make(map[string][]*magen.Checkpoint)
	}
	n.threads[cp.ThreadID] = append(n.threads[cp.ThreadID], n.copy(cp))
	return nil
}

func (n *naiveStore) Load(ctx context.Context, id string) (*magen.Checkpoint, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	h := n.threads[id]
	if len(h) == 0 {
		return nil, magen.ErrThreadNotFound
	}
	return n.copy(h[len(h)-1]), nil
}

func (n *naiveStore) History(ctx context.Context, id string) ([]*magen.Checkpoint, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	h := n.threads[id]
	if len(h) == 0 {
		return nil, magen.ErrThreadNotFound
	}
	out := make([]*magen.Checkpoint, len(h))
	for i, cp := range h {
		out[i] = n.copy(cp)
	}
	return out, nil
}

func (n *naiveStore) Delete(ctx context.Context, id string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.threads, id)
	return nil
}

// TestNaiveStoreConforms makes sure the broken stores above are broken
// only where their flags say: with no flag set, the naive store passes.
func TestNaiveStoreConforms(t *testing.T) {
	if err := magentest.TestCheckpointer(t.Context(), func() (magen.Checkpointer, error) { return &naiveStore{}, nil }); err != nil {
		t.Errorf("TestCheckpointer(naive store, no faults) = %v, want nil", err)
	}
	if err := magentest.TestCheckpointer(t.Context(), func() (magen.Checkpointer, error) { return broken(func(*brokenStore) {}), nil }); err != nil {
		t.Errorf("TestCheckpointer(broken store, no faults) = %v, want nil", err)
	}
}
