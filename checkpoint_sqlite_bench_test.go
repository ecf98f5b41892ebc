package magen_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/magen-go/magen"
)

// Run them together, so that the ratios are read off one run:
//
//	go test -run '^$' -bench 'SQLite' -benchtime=2000x .
//
// Targets: a FULL turn costs at most 1.3× a FULL bare commit, and a turn
// with 100,000 threads stored at most 1.2× one with 10.

var sqDurabilities = []magen.Durability{magen.DurabilityFull, magen.DurabilityNormal}

// sqBenchTurns runs b.N orchestrator turns of the 3-node graph (each node
// asks once, so a workflow is 4 turns) on store, with the default log file.
func sqBenchTurns(b *testing.B, store magen.Checkpointer) {
	runTurns(b, magen.WithCheckpointer(store))
}

// BenchmarkSQLiteTurn measures one full orchestrator turn (one op = one
// call: load, run the node, save) on SQLite.
func BenchmarkSQLiteTurn(b *testing.B) {
	for _, d := range sqDurabilities {
		b.Run("durability="+d.String(), func(b *testing.B) {
			sqBenchTurns(b, sqOpen(b, sqTempPath(b), magen.WithDurability(d)))
		})
	}
}

// sqWorkflow returns the checkpoints of one whole workflow of the 3-node
// graph, as the orchestrator writes them.
func sqWorkflow(b *testing.B) []*magen.Checkpoint {
	mem := magen.NewMemoryCheckpointer()
	o, err := magen.New(sqThreeSteps(), magen.WithCheckpointer(mem))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r, err := o.Run(ctx, magen.Input{})
	for err == nil && r.Status == magen.StatusAwaiting {
		r, err = o.Run(ctx, magen.Input{UserInput: sqAnswerTo(r.StateData.Seq), StateData: r.StateData})
	}
	if err != nil {
		b.Fatal(err)
	}
	h, err := mem.History(ctx, r.StateData.ThreadID)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkSQLiteBareCommit measures the floor under a turn: one
// transaction that inserts one row as large as an average checkpoint of
// BenchmarkSQLiteTurn, on a connection with the same settings.
func BenchmarkSQLiteBareCommit(b *testing.B) {
	size := 0
	h := sqWorkflow(b)
	for _, cp := range h {
		size += len(cp.ThreadID) + len(cp.State) + len(cp.Error) + 4*8 + len(cp.Status)
		for _, n := range cp.Next {
			size += len(n) + 4
		}
		for _, t := range cp.Pending {
			size += len(t.ResultSchema) + len(t.Instructions) + len(t.NodeID) + len(t.Example) + 40
		}
		for _, r := range cp.Resumes {
			size += len(r) + 1
		}
	}
	size /= len(h)
	payload := make([]byte, size)
	rand.Read(payload)
	for _, d := range sqDurabilities {
		b.Run("durability="+d.String(), func(b *testing.B) {
			s := sqOpen(b, sqTempPath(b), magen.WithDurability(d))
			db := magen.SQLiteDB(s)
			if _, err := db.Exec(`CREATE TABLE bare (id INTEGER PRIMARY KEY, data BLOB)`); err != nil {
				b.Fatal(err)
			}
			ins, err := db.Prepare(`INSERT INTO bare (data) VALUES (?)`)
			if err != nil {
				b.Fatal(err)
			}
			defer ins.Close()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				tx, err := db.Begin()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Stmt(ins).Exec(payload); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSQLiteTurnThreads measures the turn of BenchmarkSQLiteTurn
// (durability FULL) with many threads already stored, each with the four
// checkpoints of a finished workflow.
func BenchmarkSQLiteTurnThreads(b *testing.B) {
	dir := b.TempDir() // outlives the sub-benchmarks' repeated runs
	tmpl := sqWorkflow(b)
	for _, n := range []int{10, 10_000, 100_000} {
		path := filepath.Join(dir, fmt.Sprintf("threads-%d.db", n))
		built := false
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			if !built {
				b.StopTimer()
				sqBuildFixture(b, path, tmpl, n)
				built = true
				b.StartTimer()
			}
			sqBenchTurns(b, sqOpen(b, path))
		})
	}
}

// sqBuildFixture stores n threads, each a copy of the workflow tmpl under
// a random id, in large transactions.
func sqBuildFixture(b *testing.B, path string, tmpl []*magen.Checkpoint, n int) {
	s, err := magen.OpenSQLite(path, magen.WithDurability(magen.DurabilityNormal))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 10_000
	cps := make([]*magen.Checkpoint, 0, batch*len(tmpl))
	for i := 0; i < n; {
		cps = cps[:0]
		for ; i < n && len(cps) < cap(cps); i++ {
			id := rand.Text()
			for _, cp := range tmpl {
				c := *cp
				c.ThreadID = id
				cps = append(cps, &c)
			}
		}
		if err := magen.SQLiteSaveAll(context.Background(), s, cps); err != nil {
			b.Fatal(err)
		}
	}
}
