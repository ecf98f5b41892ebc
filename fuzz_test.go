package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/magen-go/magen"
)

// FuzzCall feeds arbitrary tool arguments to a thread that waits for a
// result. Whatever arrives, the call returns a result or an error, never
// panics, and a rejected call leaves the thread where it was.
func FuzzCall(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"userInput":{"text":"ok"}}`, `{"userInput":{"text":1}}`,
		`{"userInput":[],"workflowStateData":{"thread_id":"T","seq":1}}`,
		`{"userInput":{"text":"\u0000"},"workflowStateData":{"thread_id":"T","seq":1e300}}`,
		`{"workflowStateData":{"thread_id":"T","seq":-1}}`, `{"userInput":{"text":"a"}} {"x":1}`,
		`{"userInput":{"text":"ok"},"workflowStateData":{"thread_id":"T"}}`,
	} {
		f.Add([]byte(seed))
	}
	var n atomic.Int64
	var setup atomic.Bool
	o, err := magen.New(docGraph(&counters{}), magen.WithCheckpointer(magen.NewMemoryCheckpointer()),
		magen.WithLogger(discard()), magen.WithIDSource(func() string {
			if setup.Swap(false) {
				return "T" // the thread each input is tried on
			}
			return fmt.Sprint("new-", n.Add(1))
		}))
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, args []byte) {
		// Each input starts from a fresh thread "T" waiting in node draft.
		o.Checkpointer().Delete(ctx, "T")
		setup.Store(true)
		if _, err := o.Run(ctx, magen.Input{UserInput: json.RawMessage(`{"topic":"Go"}`)}); err != nil {
			t.Fatal(err)
		}
		r, err := o.Call(ctx, args)
		if err != nil {
			if !errors.Is(err, magen.ErrInvalidInput) && !errors.Is(err, magen.ErrThreadNotFound) &&
				!errors.Is(err, magen.ErrStaleState) && !errors.Is(err, magen.ErrInputTooLarge) {
				t.Errorf("Call(%q) = %v: an error of no known kind", args, err)
			}
			cp, lerr := o.Checkpointer().Load(ctx, "T")
			if lerr != nil || cp.Seq != 1 {
				t.Errorf("Call(%q) was rejected but the thread moved to %d", args, cp.Seq)
			}
			return
		}
		if r.Prompt == "" || r.Status == "" || r.StateData.ThreadID == "" {
			t.Errorf("Call(%q) = %+v: an incomplete result", args, r)
		}
	})
}
