package magen_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"modernc.org/sqlite"
)

// sqState is the state of the SQLite test workflows. Each turn answers the
// pending task with the seq of the checkpoint it resumes, and the node
// appends that answer. So a thread at checkpoint q holds exactly the
// answers 1..q-1: a lost turn leaves a gap, a turn applied twice a
// repeat.
type sqState struct {
	Answers []int64 `json:"answers"`
}

type sqAnswer struct {
	N int64 `json:"n" jsonschema:"the number asked for"`
}

// sqAsk is a node that asks for a number and appends it.
func sqAsk(task string) magen.NodeFunc[sqState] {
	return func(ctx context.Context, s sqState) (sqState, error) {
		out, err := magen.Ask[sqAnswer](ctx, magen.Guidance{Task: task})
		if err != nil {
			return s, err
		}
		s.Answers = append(s.Answers, out.N)
		return s, nil
	}
}

// sqThreeSteps is a 3-node graph whose nodes each ask once: four turns from
// start to end.
func sqThreeSteps() *magen.Graph[sqState] {
	return magen.NewGraph[sqState]().
		AddNode("a", sqAsk("Give the first number.")).
		AddNode("b", sqAsk("Give the second number.")).
		AddNode("c", sqAsk("Give the third number.")).
		AddEdge(magen.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", magen.End)
}

// sqLoop is a graph whose one node asks n times: n+1 turns from start to end.
func sqLoop(n int, step magen.NodeFunc[sqState]) *magen.Graph[sqState] {
	return magen.NewGraph[sqState]().
		AddNode("step", step).
		AddEdge(magen.Start, "step").
		AddRoute("step", func(s sqState) string {
			if len(s.Answers) >= n {
				return "done"
			}
			return "again"
		}, magen.Routes{"done": magen.End, "again": "step"})
}

// sqAnswerTo is the answer the test workflows expect to the task of
// checkpoint seq.
func sqAnswerTo(seq int64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"n":%d}`, seq))
}

// sqOpen opens a store at path, closed when the test ends.
func sqOpen(t testing.TB, path string, opts ...magen.SQLiteOption) *magen.SQLiteCheckpointer {
	t.Helper()
	s, err := magen.OpenSQLite(path, opts...)
	if err != nil {
		t.Fatalf("OpenSQLite(%q) = %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sqTempPath returns the default store path under a new temp dir.
func sqTempPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), ".magen", "workflow-state.db")
}

// sqCheckHistory checks a thread of the test workflows: an unbroken parent
// chain, and at each checkpoint q exactly the answers 1..q-1. It returns
// the latest checkpoint.
func sqCheckHistory(h []*magen.Checkpoint) (*magen.Checkpoint, error) {
	if len(h) == 0 {
		return nil, errors.New("empty history")
	}
	var errs []error
	for i, cp := range h {
		if want := int64(i + 1); cp.Seq != want || cp.Parent != want-1 {
			errs = append(errs, fmt.Errorf("checkpoint %d has seq %d, parent %d; want seq %d, parent %d", i, cp.Seq, cp.Parent, want, want-1))
		}
		var s sqState
		if err := json.Unmarshal(cp.State, &s); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint %d: state %s: %v", cp.Seq, cp.State, err))
			continue
		}
		want := make([]int64, 0, cp.Seq)
		for n := int64(1); n < cp.Seq; n++ {
			want = append(want, n)
		}
		if !slices.Equal(s.Answers, want) {
			errs = append(errs, fmt.Errorf("checkpoint %d holds answers %v, want %v (a turn lost or applied twice)", cp.Seq, s.Answers, want))
		}
	}
	return h[len(h)-1], errors.Join(errs...)
}

// sqliteCode returns the primary SQLite result code in err's chain, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// sqIntegrity runs PRAGMA integrity_check on the database file at path,
// through a connection of its own, and returns its verdict: "ok" for a
// sound file.
func sqIntegrity(path string) (string, error) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
