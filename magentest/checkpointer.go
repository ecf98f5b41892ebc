package magentest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/magen-go/magen"
)

// TestCheckpointer tests a magen.Checkpointer implementation against the
// contract every store must keep, the way testing/fstest.TestFS tests a
// file system. It runs each check on a fresh store from newStore, and
// returns every violation found, joined with errors.Join, or nil if the
// store conforms. Each violation names its check. A store that implements
// io.Closer is closed after its check.
//
// The checks: save and load round trip every field; history is oldest
// first; the parent chain holds; delete removes a thread, and deleting an
// unknown one is not an error; an unknown thread gives ErrThreadNotFound;
// a save whose parent is not the latest gives ErrConflict and writes
// nothing; concurrent writers on different threads all succeed; of
// concurrent writers with the same parent exactly one wins; a state of
// several MB and one full of unusual characters (NUL escapes, emoji,
// right-to-left text, quotes, newlines) round-trip; returned checkpoints
// share no memory with the store; an invalid checkpoint gives
// ErrInvalidCheckpoint.
//
// What a store may change, and the checks allow: Time needs to survive
// only to the millisecond, and its location and monotonic reading not at
// all; nil and empty slices are equivalent; JSON values (State, Resumes and
// the raw JSON of Pending) are compared as JSON, so a store may reformat
// them, but must keep every string and number exactly.
func TestCheckpointer(ctx context.Context, newStore func() (magen.Checkpointer, error)) error {
	var errs []error
	for _, c := range checkpointerChecks {
		store, err := newStore()
		if err != nil {
			errs = append(errs, fmt.Errorf("magentest: check %s: new store: %w", c.name, err))
			continue
		}
		if err := runCheck(ctx, c, store); err != nil {
			errs = append(errs, fmt.Errorf("magentest: check %s: %w", c.name, err))
		}
		if cl, ok := store.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("magentest: check %s: close store: %w", c.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// RunCheckpointerTests runs the checks of TestCheckpointer as tests, each
// on a fresh store from newStore, which may register t.Cleanup to close
// it. When t is a *testing.T each check is a subtest named after it.
// Violations are reported with t.Errorf.
func RunCheckpointerTests(t testing.TB, newStore func(t testing.TB) magen.Checkpointer) {
	t.Helper()
	run := func(t testing.TB, c checkpointerCheck) {
		t.Helper()
		store := newStore(t)
		if store == nil {
			t.Errorf("check %s: newStore returned nil", c.name)
			return
		}
		if err := runCheck(t.Context(), c, store); err != nil {
			t.Errorf("check %s: %v", c.name, err)
		}
	}
	for _, c := range checkpointerChecks {
		if tt, ok := t.(*testing.T); ok {
			tt.Run(c.name, func(t *testing.T) { run(t, c) })
		} else {
			run(t, c)
		}
	}
}

type checkpointerCheck struct {
	name string
	run  func(ctx context.Context, s magen.Checkpointer) error
}

var checkpointerChecks = []checkpointerCheck{
	{"SaveLoad", checkSaveLoad},
	{"History", checkHistory},
	{"ParentChain", checkParentChain},
	{"Delete", checkDelete},
	{"UnknownThread", checkUnknownThread},
	{"Conflict", checkConflict},
	{"ConcurrentThreads", checkConcurrentThreads},
	{"ConcurrentSameThread", checkConcurrentSameThread},
	{"LargeState", checkLargeState},
	{"UnusualCharacters", checkUnusualCharacters},
	{"NoSharedMemory", checkNoSharedMemory},
	{"InvalidCheckpoint", checkInvalidCheckpoint},
}

// runCheck runs one check, turning a panic in the store into a violation.
func runCheck(ctx context.Context, c checkpointerCheck, s magen.Checkpointer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.run(ctx, s)
}

// timePrecision is how close a loaded Time must be to the saved one.
const timePrecision = time.Millisecond

// checkpointOpts compare checkpoints as the contract requires (see
// TestCheckpointer).
var checkpointOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool {
		d := a.Sub(b)
		return d > -timePrecision && d < timePrecision
	}),
	cmp.FilterValues(func(a, b json.RawMessage) bool { return len(a) > 0 || len(b) > 0 }, cmp.Comparer(jsonEqual)),
	cmpopts.EquateEmpty(),
}

// jsonEqual reports whether a and b are the same JSON value. Numbers are
// compared by their text, so that a store losing precision is caught.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if !json.Valid(a) || !json.Valid(b) {
		return false
	}
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func decodeJSON(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// diffCheckpoints compares two checkpoints or two lists of them. Large
// JSON values are shown as their size and the digest of their bytes, so
// that a report stays readable and quick to make.
func diffCheckpoints(want, got any) string {
	if cmp.Equal(want, got, checkpointOpts) {
		return ""
	}
	return cmp.Diff(abbreviate(want), abbreviate(got), checkpointOpts)
}

func abbreviate(v any) any {
	short := func(r json.RawMessage) json.RawMessage {
		if len(r) <= 1024 {
			return r
		}
		return json.RawMessage(fmt.Sprintf(`"<%d bytes of JSON, sha256 %.16x>"`, len(r), sha256.Sum256(r)))
	}
	one := func(cp *magen.Checkpoint) *magen.Checkpoint {
		if cp == nil {
			return nil
		}
		c := *cp
		c.State = short(cp.State)
		c.Resumes = nil
		for _, r := range cp.Resumes {
			c.Resumes = append(c.Resumes, short(r))
		}
		return &c
	}
	switch v := v.(type) {
	case *magen.Checkpoint:
		return one(v)
	case []*magen.Checkpoint:
		out := make([]*magen.Checkpoint, len(v))
		for i, cp := range v {
			out[i] = one(cp)
		}
		return out
	}
	return v
}

// problems collects the violations of one check.
type problems []error

// maxProblem caps the length of one violation's message.
const maxProblem = 8 << 10

func (p *problems) add(format string, args ...any) {
	if msg := fmt.Sprintf(format, args...); len(msg) > maxProblem {
		*p = append(*p, fmt.Errorf("%s\n... (%d more bytes)", msg[:maxProblem], len(msg)-maxProblem))
		return
	}
	*p = append(*p, fmt.Errorf(format, args...))
}

func (p problems) err() error { return errors.Join(p...) }

var baseTime = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// sample returns a checkpoint with every field set.
func sample(thread string, seq int64) *magen.Checkpoint {
	node := fmt.Sprintf("node-%d", seq)
	return &magen.Checkpoint{
		ThreadID: thread,
		Seq:      seq,
		Parent:   seq - 1,
		Time:     baseTime.Add(time.Duration(seq) * time.Second),
		Status:   magen.StatusAwaiting,
		Next:     []string{node},
		Pending: []magen.Task{{
			NodeID:       node,
			Index:        int(seq % 3),
			Kind:         magen.KindDelegate,
			Instructions: fmt.Sprintf("Do step %d.", seq),
			Tool:         "some-tool",
			ToolInput:    json.RawMessage(fmt.Sprintf(`{"step":%d}`, seq)),
			Example:      json.RawMessage(`{"answer":"aaa"}`),
			ResultSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`),
		}},
		Resumes: []json.RawMessage{json.RawMessage(`{"answer":"aaa"}`), json.RawMessage(`{"answer": "second", "n": 2}`)},
		State:   json.RawMessage(fmt.Sprintf(`{"seq":%d,"topic":"aaa","items":[1,2,3],"nested":{"ok":true,"none":null}}`, seq)),
	}
}

// clone returns a deep copy of cp, made without the store.
func clone(cp *magen.Checkpoint) *magen.Checkpoint {
	d := *cp
	d.Next = append([]string(nil), cp.Next...)
	d.Pending = nil
	for _, t := range cp.Pending {
		t.ToolInput = bytes.Clone(t.ToolInput)
		t.Example = bytes.Clone(t.Example)
		t.ResultSchema = bytes.Clone(t.ResultSchema)
		d.Pending = append(d.Pending, t)
	}
	d.Resumes = nil
	for _, r := range cp.Resumes {
		d.Resumes = append(d.Resumes, bytes.Clone(r))
	}
	d.State = bytes.Clone(cp.State)
	return &d
}

// saveChain saves checkpoints 1..n of thread.
func saveChain(ctx context.Context, s magen.Checkpointer, thread string, n int64) ([]*magen.Checkpoint, error) {
	var out []*magen.Checkpoint
	for seq := int64(1); seq <= n; seq++ {
		cp := sample(thread, seq)
		if err := s.Save(ctx, clone(cp)); err != nil {
			return out, fmt.Errorf("Save(%q, seq %d) = %v, want nil", thread, seq, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// expectHistory checks that thread's history is want.
func expectHistory(ctx context.Context, s magen.Checkpointer, p *problems, thread string, want []*magen.Checkpoint) {
	got, err := s.History(ctx, thread)
	if err != nil {
		p.add("History(%q) = %v, want %d checkpoints", thread, err, len(want))
		return
	}
	if d := diffCheckpoints(want, got); d != "" {
		p.add("History(%q) mismatch (-want +got):\n%s", thread, d)
	}
}

// expectLatest checks that thread's latest checkpoint is want.
func expectLatest(ctx context.Context, s magen.Checkpointer, p *problems, thread string, want *magen.Checkpoint) {
	got, err := s.Load(ctx, thread)
	if err != nil {
		p.add("Load(%q) = %v, want checkpoint %d", thread, err, want.Seq)
		return
	}
	if d := diffCheckpoints(want, got); d != "" {
		p.add("Load(%q) mismatch (-want +got):\n%s", thread, d)
	}
}

// expectNotFound checks that thread is unknown to the store.
func expectNotFound(ctx context.Context, s magen.Checkpointer, p *problems, thread string) {
	if cp, err := s.Load(ctx, thread); !errors.Is(err, magen.ErrThreadNotFound) {
		p.add("Load(%q) = %v, %v; want an error wrapping ErrThreadNotFound", thread, summary(cp), err)
	}
	if h, err := s.History(ctx, thread); !errors.Is(err, magen.ErrThreadNotFound) {
		p.add("History(%q) = %d checkpoints, %v; want an error wrapping ErrThreadNotFound", thread, len(h), err)
	}
}

func summary(cp *magen.Checkpoint) string {
	if cp == nil {
		return "<nil>"
	}
	return fmt.Sprintf("checkpoint %d", cp.Seq)
}

func checkSaveLoad(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "save-load"
	for seq := int64(1); seq <= 2; seq++ {
		cp := sample(thread, seq)
		if err := s.Save(ctx, clone(cp)); err != nil {
			return fmt.Errorf("Save(seq %d) = %v, want nil", seq, err)
		}
		expectLatest(ctx, s, &p, thread, cp)
	}
	// A finished thread, with the fields a failure sets, and a time in
	// another zone.
	cp := &magen.Checkpoint{
		ThreadID: thread, Seq: 3, Parent: 2,
		Time:   time.Date(2031, 12, 31, 23, 59, 59, 999_000_000, time.FixedZone("IST", 5*3600+1800)),
		Status: magen.StatusFailed,
		Next:   []string{"node-3"},
		State:  json.RawMessage(`{"seq":3}`),
		Error:  `node "node-3": exit status 1`,
	}
	if err := s.Save(ctx, clone(cp)); err != nil {
		return errors.Join(append(p, fmt.Errorf("Save(seq 3) = %v, want nil", err))...)
	}
	expectLatest(ctx, s, &p, thread, cp)
	return p.err()
}

func checkHistory(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	// Interleave two threads: each history holds only its own.
	var a, b []*magen.Checkpoint
	for seq := int64(1); seq <= 5; seq++ {
		for _, h := range []struct {
			thread string
			list   *[]*magen.Checkpoint
		}{{"history-a", &a}, {"history-b", &b}} {
			if seq > 3 && h.thread == "history-b" {
				continue
			}
			cp := sample(h.thread, seq)
			if seq == 5 {
				cp.Status, cp.Pending, cp.Next = magen.StatusCompleted, nil, nil
			}
			if err := s.Save(ctx, clone(cp)); err != nil {
				return fmt.Errorf("Save(%q, seq %d) = %v, want nil", h.thread, seq, err)
			}
			*h.list = append(*h.list, cp)
		}
	}
	expectHistory(ctx, s, &p, "history-a", a)
	expectHistory(ctx, s, &p, "history-b", b)
	return p.err()
}

func checkParentChain(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "chain"
	// A new thread starts at seq 1 with parent 0.
	first := sample(thread, 4)
	if err := s.Save(ctx, first); !errors.Is(err, magen.ErrConflict) {
		p.add("Save(seq 4, parent 3) on a new thread = %v, want an error wrapping ErrConflict", err)
	}
	expectNotFound(ctx, s, &p, thread)
	if _, err := saveChain(ctx, s, thread, 4); err != nil {
		return errors.Join(append(p, err)...)
	}
	h, err := s.History(ctx, thread)
	if err != nil {
		return errors.Join(append(p, fmt.Errorf("History = %v, want 4 checkpoints", err))...)
	}
	if len(h) != 4 {
		p.add("History returned %d checkpoints, want 4", len(h))
	}
	for i, cp := range h {
		if want := int64(i + 1); cp.Seq != want || cp.Parent != want-1 {
			p.add("History[%d] has seq %d, parent %d; want seq %d, parent %d", i, cp.Seq, cp.Parent, want, want-1)
		}
	}
	// A checkpoint that skips ahead of the latest is a conflict too.
	if err := s.Save(ctx, sample(thread, 7)); !errors.Is(err, magen.ErrConflict) {
		p.add("Save(seq 7, parent 6) with latest 4 = %v, want an error wrapping ErrConflict", err)
	}
	return p.err()
}

func checkDelete(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	if _, err := saveChain(ctx, s, "delete-me", 3); err != nil {
		return err
	}
	keep, err := saveChain(ctx, s, "keep-me", 2)
	if err != nil {
		return err
	}
	if err := s.Delete(ctx, "delete-me"); err != nil {
		return fmt.Errorf("Delete(%q) = %v, want nil", "delete-me", err)
	}
	expectNotFound(ctx, s, &p, "delete-me")
	expectHistory(ctx, s, &p, "keep-me", keep)
	for _, id := range []string{"delete-me", "never-saved"} {
		if err := s.Delete(ctx, id); err != nil {
			p.add("Delete(%q) of an unknown thread = %v, want nil", id, err)
		}
	}
	// A deleted thread is unknown: it can start again from seq 1.
	again := sample("delete-me", 1)
	if err := s.Save(ctx, clone(again)); err != nil {
		p.add("Save(seq 1) after Delete = %v, want nil", err)
	} else {
		expectHistory(ctx, s, &p, "delete-me", []*magen.Checkpoint{again})
	}
	return p.err()
}

func checkUnknownThread(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	if _, err := saveChain(ctx, s, "thread-1", 1); err != nil {
		return err
	}
	// Thread ids are exact keys: no prefixes, no case folding, no padding.
	for _, id := range []string{"no-such-thread", "thread", "thread-10", "THREAD-1", "thread-1 ", ""} {
		expectNotFound(ctx, s, &p, id)
	}
	return p.err()
}

func checkConflict(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "conflict"
	saved, err := saveChain(ctx, s, thread, 2)
	if err != nil {
		return err
	}
	for _, tc := range []struct {
		name string
		cp   *magen.Checkpoint
	}{
		{"stale parent 1", sample(thread, 2)},
		{"parent 0 on an existing thread", sample(thread, 1)},
		{"parent 3 from the future", sample(thread, 4)},
	} {
		tc.cp.Error = "must not be written"
		if err := s.Save(ctx, tc.cp); !errors.Is(err, magen.ErrConflict) {
			p.add("Save(%s) = %v, want an error wrapping ErrConflict", tc.name, err)
		}
	}
	expectLatest(ctx, s, &p, thread, saved[1])
	expectHistory(ctx, s, &p, thread, saved)

	// The same parent twice: the second save lost the race.
	first := sample(thread, 3)
	if err := s.Save(ctx, clone(first)); err != nil {
		return errors.Join(append(p, fmt.Errorf("Save(seq 3) = %v, want nil", err))...)
	}
	second := sample(thread, 3)
	second.State = json.RawMessage(`{"second":true}`)
	if err := s.Save(ctx, second); !errors.Is(err, magen.ErrConflict) {
		p.add("second Save(seq 3, parent 2) = %v, want an error wrapping ErrConflict", err)
	}
	expectLatest(ctx, s, &p, thread, first)
	expectHistory(ctx, s, &p, thread, append(saved, first))
	return p.err()
}

func checkConcurrentThreads(ctx context.Context, s magen.Checkpointer) error {
	const writers, saves = 16, 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		p    problems
		want = make([][]*magen.Checkpoint, writers)
	)
	report := func(err error) {
		mu.Lock()
		p = append(p, err)
		mu.Unlock()
	}
	for w := range writers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					report(fmt.Errorf("writer %d: panic: %v", w, r))
				}
			}()
			thread := fmt.Sprintf("writer-%02d", w)
			for seq := int64(1); seq <= saves; seq++ {
				cp := sample(thread, seq)
				if err := s.Save(ctx, clone(cp)); err != nil {
					report(fmt.Errorf("Save(%q, seq %d) = %v, want nil", thread, seq, err))
					return
				}
				want[w] = append(want[w], cp)
				got, err := s.Load(ctx, thread)
				if err != nil || got.Seq != seq {
					report(fmt.Errorf("Load(%q) after Save(seq %d) = %s, %v", thread, seq, summary(got), err))
					return
				}
			}
		})
	}
	wg.Wait()
	if len(p) > 0 {
		return p.err()
	}
	for w := range writers {
		if expectHistory(ctx, s, &p, fmt.Sprintf("writer-%02d", w), want[w]); len(p) >= 3 {
			break // the rest are likely alike
		}
	}
	return p.err()
}

func checkConcurrentSameThread(ctx context.Context, s magen.Checkpointer) error {
	const rounds, writers = 5, 16
	var p problems
	for r := range rounds {
		thread := fmt.Sprintf("race-%d", r)
		saved, err := saveChain(ctx, s, thread, 1)
		if err != nil {
			return err
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, writers)
			cps   = make([]*magen.Checkpoint, writers)
		)
		for w := range writers {
			cps[w] = sample(thread, 2)
			cps[w].State = json.RawMessage(fmt.Sprintf(`{"writer":%d}`, w))
			wg.Go(func() {
				defer func() {
					if r := recover(); r != nil {
						errs[w] = fmt.Errorf("panic: %v", r)
					}
				}()
				<-start
				errs[w] = s.Save(ctx, clone(cps[w]))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				p.add("round %d: writers %d and %d both saved seq 2 with parent 1", r, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, magen.ErrConflict):
				p.add("round %d: writer %d: Save = %v, want nil or an error wrapping ErrConflict", r, w, err)
			}
		}
		if winner < 0 {
			p.add("round %d: all %d writers failed; want exactly one to save", r, writers)
			continue
		}
		expectLatest(ctx, s, &p, thread, cps[winner])
		expectHistory(ctx, s, &p, thread, append(saved, cps[winner]))
	}
	return p.err()
}

// largeState is about 6 MiB of JSON, with varied characters so that
// compression or truncation cannot pass by accident.
var largeState = sync.OnceValue(func() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"chunks":[`)
	for i := range 70_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"i":%d,"text":"chunk %d — ünïcødé 🧵 \"quoted\" \\ line\n","n":%d}`, i, i*7919%100003, i*i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
})

// largeAnswer is a 1 MiB answer.
var largeAnswer = sync.OnceValue(func() json.RawMessage {
	return json.RawMessage(`{"answer":"` + strings.Repeat("0123456789abcdef", 1<<16) + `"}`)
})

func checkLargeState(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "large"
	cp := sample(thread, 1)
	cp.State, cp.Resumes = bytes.Clone(largeState()), []json.RawMessage{bytes.Clone(largeAnswer())}
	if err := s.Save(ctx, clone(cp)); err != nil {
		return fmt.Errorf("Save(%d bytes of state) = %v, want nil", len(cp.State), err)
	}
	got, err := s.Load(ctx, thread)
	if err != nil {
		return fmt.Errorf("Load = %v", err)
	}
	if !jsonEqual(cp.State, got.State) {
		p.add("Load returned %d bytes of state that differ from the %d saved", len(got.State), len(cp.State))
	}
	if len(got.Resumes) != 1 || !jsonEqual(cp.Resumes[0], got.Resumes[0]) {
		p.add("Load returned resumes that differ from the 1 MiB answer saved")
	}
	next := sample(thread, 2)
	next.State = cp.State
	if err := s.Save(ctx, clone(next)); err != nil {
		return errors.Join(append(p, fmt.Errorf("Save(seq 2, %d bytes of state) = %v, want nil", len(next.State), err))...)
	}
	expectHistory(ctx, s, &p, thread, []*magen.Checkpoint{cp, next})
	return p.err()
}

// unusualState is valid JSON full of characters that careless encodings
// lose: NUL and other control escapes, surrogate pairs, emoji sequences,
// right-to-left text, quotes, backslashes, line separators and a number
// that a float64 cannot hold.
const unusualState = `{"nul":"a\u0000b","ctrl":"\u0001\u001f\u007f","emoji":"🧵👩‍👩‍👧🏳️‍🌈","surrogates":"\ud83d\ude00",` +
	`"rtl":"שלום עולם, مرحبا بالعالم","mixed":"abc אבג 123","quotes":"\"double\" 'single' ` + "`back`" + `",` +
	`"newlines":"one\ntwo\r\nthree","tab":"\t","backslash":"C:\\path\\to","slash":"\/","html":"<b>&amp;</b>",` +
	`"seps":"\u2028\u2029","bom":"\ufeff","key with spaces and 🔑":true,"":"empty key","big":12345678901234567890,` +
	`"precise":0.1000000000000000055511151231257827,"neg":-0,"nested":[[],{},[null]]}`

func checkUnusualCharacters(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "unusual-🧵-שלום"
	cp := sample(thread, 1)
	cp.State = json.RawMessage(unusualState)
	cp.Next = []string{"节点 one", "node\twith\ttabs"}
	cp.Pending[0].Instructions = "Say \"hi\" in עברית and 日本語.\nThen a NUL: \x00, then 🧵."
	cp.Pending[0].Example = json.RawMessage(`{"answer":"\u0000 🧵 \"q\" \n"}`)
	cp.Resumes = []json.RawMessage{json.RawMessage(`{"answer":"שלום\u0000\n\"🧵\""}`)}
	cp.Error = "exit 1: stderr: \x00 \"quoted\" 'single'\nline two\t🧵 مرحبا"
	if err := s.Save(ctx, clone(cp)); err != nil {
		return fmt.Errorf("Save = %v, want nil", err)
	}
	expectLatest(ctx, s, &p, thread, cp)
	expectHistory(ctx, s, &p, thread, []*magen.Checkpoint{cp})
	return p.err()
}

// scribble changes every 'a' in the checkpoint's byte slices and strings
// that a store might share, in place.
func scribble(cp *magen.Checkpoint) {
	swap := func(b []byte) {
		for i := range b {
			if b[i] == 'a' {
				b[i] = 'z'
			}
		}
	}
	swap(cp.State)
	for _, r := range cp.Resumes {
		swap(r)
	}
	for i := range cp.Pending {
		swap(cp.Pending[i].Example)
		swap(cp.Pending[i].ResultSchema)
		cp.Pending[i].Instructions = "scribbled"
	}
	for i := range cp.Next {
		cp.Next[i] = "scribbled"
	}
}

func checkNoSharedMemory(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	const thread = "shared"
	want := sample(thread, 1)
	cp := clone(want)
	if err := s.Save(ctx, cp); err != nil {
		return fmt.Errorf("Save = %v, want nil", err)
	}
	scribble(cp)
	got, err := s.Load(ctx, thread)
	if err != nil {
		return fmt.Errorf("Load = %v", err)
	}
	if d := diffCheckpoints(want, got); d != "" {
		p.add("changing the checkpoint passed to Save changed the store (-want +got):\n%s", d)
	}
	scribble(got)
	expectLatest(ctx, s, &p, thread, want)
	if h, err := s.History(ctx, thread); err == nil {
		for _, cp := range h {
			scribble(cp)
		}
		expectLatest(ctx, s, &p, thread, want)
		expectHistory(ctx, s, &p, thread, []*magen.Checkpoint{want})
	} else {
		p.add("History = %v", err)
	}
	return p.err()
}

func checkInvalidCheckpoint(ctx context.Context, s magen.Checkpointer) error {
	var p problems
	noThread := sample("", 1)
	badSeq := sample("invalid", 3)
	badSeq.Parent = 0
	for _, tc := range []struct {
		name string
		cp   *magen.Checkpoint
	}{
		{"nil checkpoint", nil},
		{"empty thread id", noThread},
		{"seq 3 after parent 0", badSeq},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return s.Save(ctx, tc.cp)
		}()
		if !errors.Is(err, magen.ErrInvalidCheckpoint) {
			p.add("Save(%s) = %v, want an error wrapping ErrInvalidCheckpoint", tc.name, err)
		}
	}
	expectNotFound(ctx, s, &p, "")
	expectNotFound(ctx, s, &p, "invalid")
	return p.err()
}
