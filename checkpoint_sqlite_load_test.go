package magen_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/magen-go/magen"
)

// TestSQLiteLoad runs full workflows from 64 goroutines through four
// orchestrators that share one SQLite store: every turn must succeed, and
// every thread must end completed with exactly its own answers.
func TestSQLiteLoad(t *testing.T) {
	const goroutines, orchestrators = 64, 4
	workflows := 15
	if testing.Short() {
		workflows = 2
	}
	ctx := t.Context()
	store := sqOpen(t, sqTempPath(t))
	var orchs []*magen.Orchestrator[sqState]
	for range orchestrators {
		o, err := magen.New(sqThreeSteps(), magen.WithCheckpointer(store))
		if err != nil {
			t.Fatal(err)
		}
		orchs = append(orchs, o)
	}

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		threads []string
	)
	for g := range goroutines {
		o := orchs[g%orchestrators]
		wg.Go(func() {
			for w := range workflows {
				r, err := o.Run(ctx, magen.Input{})
				for err == nil && r.Status == magen.StatusAwaiting {
					r, err = o.Run(ctx, magen.Input{UserInput: sqAnswerTo(r.StateData.Seq), StateData: r.StateData})
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("goroutine %d, workflow %d: %w", g, w, err))
				} else {
					threads = append(threads, r.StateData.ThreadID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("%d of %d workflows failed:\n%v", len(errs), goroutines*workflows, err)
	}
	if len(threads) != goroutines*workflows {
		t.Fatalf("%d workflows finished, want %d", len(threads), goroutines*workflows)
	}
	for _, id := range threads {
		h, err := store.History(ctx, id)
		if err != nil {
			t.Fatalf("History(%s) = %v", id, err)
		}
		last, err := sqCheckHistory(h)
		if err != nil {
			t.Fatalf("thread %s: %v", id, err)
		}
		if last.Status != magen.StatusCompleted || last.Seq != 4 {
			t.Fatalf("thread %s ends %s at checkpoint %d, want completed at 4", id, last.Status, last.Seq)
		}
	}
	var rows int
	if err := magen.SQLiteDB(store).QueryRowContext(ctx, `SELECT count(*) FROM checkpoints`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := 4 * goroutines * workflows; rows != want {
		t.Errorf("%d checkpoints stored, want %d", rows, want)
	}
}
