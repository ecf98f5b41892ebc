package magen_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

func TestSQLiteConformance(t *testing.T) {
	t.Run("OpenSQLite", func(t *testing.T) {
		magentest.RunCheckpointerTests(t, func(t testing.TB) magen.Checkpointer { return sqOpen(t, sqTempPath(t)) })
	})
	t.Run("OpenSQLite/normal/keep-last", func(t *testing.T) {
		magentest.RunCheckpointerTests(t, func(t testing.TB) magen.Checkpointer {
			return sqOpen(t, sqTempPath(t), magen.WithDurability(magen.DurabilityNormal), magen.WithKeepLast(50))
		})
	})
	t.Run("NewSQLiteCheckpointer", func(t *testing.T) {
		magentest.RunCheckpointerTests(t, func(t testing.TB) magen.Checkpointer {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "caller.db")+
				"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, err := magen.NewSQLiteCheckpointer(db)
			if err != nil {
				t.Fatalf("NewSQLiteCheckpointer = %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

func TestSQLiteCallerDB(t *testing.T) {
	ctx := t.Context()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "caller.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection, so that the pragma checked is the one Save set
	for _, d := range []magen.Durability{magen.DurabilityNormal, magen.DurabilityFull} {
		s, err := magen.NewSQLiteCheckpointer(db, magen.WithDurability(d))
		if err != nil {
			t.Fatalf("NewSQLiteCheckpointer(%v) = %v", d, err)
		}
		id := "caller-" + d.String()
		if err := s.Save(ctx, &magen.Checkpoint{ThreadID: id, Seq: 1, Status: magen.StatusCompleted}); err != nil {
			t.Fatalf("Save = %v", err)
		}
		var sync int
		if err := db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if want := map[magen.Durability]int{magen.DurabilityNormal: 1, magen.DurabilityFull: 2}[d]; sync != want {
			t.Errorf("PRAGMA synchronous after Save with %v = %d, want %d", d, sync, want)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if err := db.PingContext(ctx); err != nil {
			t.Errorf("caller's db after Close: Ping = %v, want nil (Close must not close it)", err)
		}
	}
}

func TestSQLiteFileModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		umask int
		path  func(dir string) string
	}{
		{"nested dirs, umask 022", 0o022, func(dir string) string { return filepath.Join(dir, "a", "b", ".magen", "state.db") }},
		{"umask 222", 0o222, func(dir string) string { return filepath.Join(dir, ".magen", "state.db") }},
		{"umask 000", 0, func(dir string) string { return filepath.Join(dir, ".magen", "state.db") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t.TempDir())
			old, ok := setUmask(tc.umask)
			if !ok {
				t.Skip("no umask on this system")
			}
			s, err := magen.OpenSQLite(path)
			setUmask(old)
			if err != nil {
				t.Fatalf("OpenSQLite = %v", err)
			}
			defer s.Close()
			if err := s.Save(t.Context(), &magen.Checkpoint{ThreadID: "t", Seq: 1, State: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				path string
				want fs.FileMode
			}{
				{filepath.Dir(path), fs.ModeDir | 0o700},
				{path, 0o600},
				{path + "-wal", 0o600},
				{path + "-shm", 0o600},
			} {
				fi, err := os.Stat(c.path)
				if err != nil {
					t.Errorf("Stat(%s) = %v", c.path, err)
					continue
				}
				if got := fi.Mode() & (fs.ModeDir | fs.ModePerm); got != c.want {
					t.Errorf("mode of %s = %v, want %v", filepath.Base(c.path), got, c.want)
				}
			}
		})
	}
	t.Run("existing dir keeps its mode", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		sqOpen(t, filepath.Join(dir, "state.db"))
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o755 {
			t.Errorf("mode of an existing directory = %v after OpenSQLite, want it unchanged (0755)", got)
		}
	})
}

func TestSQLitePragmas(t *testing.T) {
	for _, tc := range []struct {
		opts     []magen.SQLiteOption
		wantSync int
	}{
		{nil, 2},
		{[]magen.SQLiteOption{magen.WithDurability(magen.DurabilityNormal)}, 1},
		{[]magen.SQLiteOption{magen.WithDurability(magen.DurabilityNormal), magen.WithDurability(magen.DurabilityFull)}, 2},
	} {
		s := sqOpen(t, sqTempPath(t), tc.opts...)
		db := magen.SQLiteDB(s)
		// Hold several connections at once, so that every connection of
		// the pool is checked, not only the first.
		var conns []*sql.Conn
		for range 3 {
			c, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for i, c := range conns {
			var mode string
			var sync, busy int
			if err := c.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&sync); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(t.Context(), `PRAGMA busy_timeout`).Scan(&busy); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || sync != tc.wantSync || busy != int(magen.DefaultBusyTimeout/time.Millisecond) {
				t.Errorf("connection %d: journal_mode %q, synchronous %d, busy_timeout %d; want wal, %d, %d",
					i, mode, sync, busy, tc.wantSync, magen.DefaultBusyTimeout/time.Millisecond)
			}
			c.Close()
		}
	}
}

func TestSQLiteReopen(t *testing.T) {
	ctx := t.Context()
	path := sqTempPath(t)
	s, err := magen.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	// State comes back byte for byte, spacing and key order included.
	want := []*magen.Checkpoint{
		{ThreadID: "t", Seq: 1, Time: time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC), Status: magen.StatusAwaiting,
			Next: []string{"a"}, State: json.RawMessage("{ \"z\" : 1,\n\t\"a\" : \"\\u0000\" }")},
		{ThreadID: "t", Seq: 2, Parent: 1, Time: time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC), Status: magen.StatusCompleted,
			State: json.RawMessage(`{"z":2}`)},
	}
	for _, cp := range want {
		if err := s.Save(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	s = sqOpen(t, path)
	got, err := s.History(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("History after reopen mismatch (-want +got):\n%s", d)
	}
	if len(got) > 0 && !bytes.Equal(got[0].State, want[0].State) {
		t.Errorf("State after reopen = %q, want %q byte for byte", got[0].State, want[0].State)
	}
}

// TestSQLiteOddPath opens a store whose path holds characters that mean
// something in a URI: the file must be created exactly there.
func TestSQLiteOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b?c#d%20e&f=g")
	path := filepath.Join(dir, "state?.db")
	s := sqOpen(t, path)
	if err := s.Save(t.Context(), &magen.Checkpoint{ThreadID: "t", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if d := cmp.Diff([]string{"state?.db"}, names); d != "" {
		t.Errorf("files in %s mismatch (-want +got):\n%s", dir, d)
	}
	if _, err := sqOpen(t, path).Load(t.Context(), "t"); err != nil {
		t.Errorf("Load after reopening = %v", err)
	}
}

func TestSQLiteNewerSchemaRefused(t *testing.T) {
	path := sqTempPath(t)
	s, err := magen.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, magen.SQLiteSchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := magen.OpenSQLite(path); !errors.Is(err, magen.ErrSchemaVersion) {
		t.Errorf("OpenSQLite(newer file) = %v, want an error wrapping ErrSchemaVersion", err)
	}
	if _, err := magen.NewSQLiteCheckpointer(db); !errors.Is(err, magen.ErrSchemaVersion) {
		t.Errorf("NewSQLiteCheckpointer(newer file) = %v, want an error wrapping ErrSchemaVersion", err)
	}
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != magen.SQLiteSchemaVersion+1 {
		t.Errorf("schema version after refusing = %d, %v; want %d untouched", v, err, magen.SQLiteSchemaVersion+1)
	}
}

// TestSQLiteMigratesOldFile crafts a version 1 file (the checkpoints table
// without the index of finished checkpoints) and opens it: the store must
// migrate it forward and keep every checkpoint usable.
func TestSQLiteMigratesOldFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{`CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied INTEGER NOT NULL)`}
	stmts = append(stmts, magen.SQLiteMigrations[0]...)
	stmts = append(stmts, `INSERT INTO schema_version VALUES (1, 0)`)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for _, r := range []struct {
		thread      string
		seq         int
		status      magen.Status
		next, state string
	}{
		{"awaiting", 1, magen.StatusAwaiting, `["a"]`, `{"answers":[]}`},
		{"awaiting", 2, magen.StatusAwaiting, `["b"]`, `{"answers":[1]}`},
		{"done", 1, magen.StatusAwaiting, `["a"]`, `{"answers":[]}`},
		{"done", 2, magen.StatusCompleted, ``, `{"answers":[1]}`},
	} {
		next := "NULL"
		if r.next != "" {
			next = "'" + r.next + "'"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO checkpoints (thread, seq, parent, time, status, next, state)
			VALUES ('%s', %d, %d, %d, '%s', %s, '%s')`, r.thread, r.seq, r.seq-1, old, r.status, next, r.state))
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s := sqOpen(t, path)
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != magen.SQLiteSchemaVersion {
		t.Errorf("schema version after migrating = %d, %v; want %d", v, err, magen.SQLiteSchemaVersion)
	}
	var indexes int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'checkpoints_finished'`).Scan(&indexes); err != nil || indexes != 1 {
		t.Errorf("index checkpoints_finished after migrating: %d, %v; want 1", indexes, err)
	}
	cp, err := s.Load(ctx, "awaiting")
	if err != nil || cp.Seq != 2 || string(cp.State) != `{"answers":[1]}` || !cmp.Equal(cp.Next, []string{"b"}) {
		t.Fatalf("Load(awaiting) after migrating = %+v, %v; want checkpoint 2", cp, err)
	}
	if err := s.Save(ctx, &magen.Checkpoint{ThreadID: "awaiting", Seq: 2, Parent: 1}); !errors.Is(err, magen.ErrConflict) {
		t.Errorf("Save(stale parent 1) after migrating = %v, want ErrConflict", err)
	}
	if err := s.Save(ctx, &magen.Checkpoint{ThreadID: "awaiting", Seq: 3, Parent: 2, Status: magen.StatusCompleted,
		Time: time.Date(2020, 1, 2, 12, 0, 0, 0, time.UTC)}); err != nil {
		t.Errorf("Save(parent 2) after migrating = %v, want nil", err)
	}
	if err := s.Save(ctx, &magen.Checkpoint{ThreadID: "done", Seq: 1}); !errors.Is(err, magen.ErrConflict) {
		t.Errorf("Save(parent 0) on a migrated thread = %v, want ErrConflict", err)
	}
	pruner := sqOpen(t, path, magen.WithSQLiteClock(func() time.Time { return time.Date(2020, 1, 3, 0, 0, 0, 0, time.UTC) }))
	if n, err := pruner.Prune(ctx, 24*time.Hour); err != nil || n != 1 {
		t.Errorf("Prune(24h) after migrating = %d, %v; want 1 (the old finished thread)", n, err)
	}
}

// TestSQLiteQueryPlans checks that no statement scans the checkpoints
// table: a turn's cost must not grow with the number of threads stored,
// and Prune must find old finished threads by their index.
func TestSQLiteQueryPlans(t *testing.T) {
	for _, stats := range []bool{false, true} {
		t.Run(fmt.Sprintf("statistics=%v", stats), func(t *testing.T) {
			db := magen.SQLiteDB(sqOpen(t, sqTempPath(t)))
			if stats {
				// Statistics that look like a big store.
				if _, err := db.Exec(`ANALYZE; DELETE FROM sqlite_stat1;
					INSERT INTO sqlite_stat1 VALUES ('checkpoints', 'sqlite_autoindex_checkpoints_1', '400000 4 1'),
						('checkpoints', 'checkpoints_finished', '100000 1'); ANALYZE sqlite_schema`); err != nil {
					t.Fatal(err)
				}
			}
			for name, q := range magen.SQLiteQueries() {
				plan := sqPlan(t, db, q)
				text := strings.Join(plan, "\n")
				for _, step := range plan {
					if f := strings.Fields(step); len(f) >= 2 && f[0] == "SCAN" && (f[1] == "c" || f[1] == "checkpoints") {
						t.Errorf("%s scans the checkpoints table:\n%s", name, text)
					}
				}
				if strings.HasPrefix(name, "prune") && !strings.Contains(text, "checkpoints_finished") {
					t.Errorf("%s does not use the index of finished checkpoints:\n%s", name, text)
				}
			}
		})
	}
	t.Run("the check can fail", func(t *testing.T) {
		db := magen.SQLiteDB(sqOpen(t, sqTempPath(t)))
		plan := sqPlan(t, db, `SELECT * FROM checkpoints WHERE state = ?1`)
		if len(plan) != 1 || plan[0] != "SCAN checkpoints" {
			t.Errorf("plan of a query by state = %q, want a scan", plan)
		}
	})
}

// sqPlan returns the steps of q's query plan.
func sqPlan(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, "thread", 1, 0, 0, "", nil, nil, nil, nil, "")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestSQLiteKeepLast(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		keep, saves int
		wantSeqs    []int64
	}{
		{0, 5, []int64{1, 2, 3, 4, 5}},
		{1, 5, []int64{5}},
		{3, 10, []int64{8, 9, 10}},
		{3, 2, []int64{1, 2}},
		{10, 10, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	} {
		t.Run(fmt.Sprintf("keep %d of %d", tc.keep, tc.saves), func(t *testing.T) {
			s := sqOpen(t, sqTempPath(t), magen.WithKeepLast(tc.keep))
			for _, id := range []string{"t", "other"} {
				for seq := int64(1); seq <= int64(tc.saves); seq++ {
					if err := s.Save(ctx, &magen.Checkpoint{ThreadID: id, Seq: seq, Parent: seq - 1, State: json.RawMessage(fmt.Sprint(seq))}); err != nil {
						t.Fatalf("Save(%s, seq %d) = %v", id, seq, err)
					}
				}
			}
			h, err := s.History(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, cp := range h {
				seqs = append(seqs, cp.Seq)
			}
			if d := cmp.Diff(tc.wantSeqs, seqs); d != "" {
				t.Errorf("History seqs mismatch (-want +got):\n%s", d)
			}
			var rows int
			if err := magen.SQLiteDB(s).QueryRow(`SELECT count(*) FROM checkpoints`).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if want := 2 * len(tc.wantSeqs); rows != want {
				t.Errorf("%d checkpoint rows stored, want %d", rows, want)
			}
			// Trimming does not loosen the conditional write.
			last := int64(tc.saves)
			if err := s.Save(ctx, &magen.Checkpoint{ThreadID: "t", Seq: last, Parent: last - 1}); !errors.Is(err, magen.ErrConflict) {
				t.Errorf("Save(stale parent) = %v, want ErrConflict", err)
			}
		})
	}
}

func TestSQLitePrune(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := sqOpen(t, sqTempPath(t), magen.WithSQLiteClock(func() time.Time { return now }))
	threads := []struct {
		id     string
		age    time.Duration
		status magen.Status
		pruned bool
	}{
		{"old-completed", 48 * time.Hour, magen.StatusCompleted, true},
		{"old-failed", 25 * time.Hour, magen.StatusFailed, true},
		{"old-awaiting", 30 * 24 * time.Hour, magen.StatusAwaiting, false},
		{"new-completed", time.Hour, magen.StatusCompleted, false},
		{"new-failed", 23 * time.Hour, magen.StatusFailed, false},
	}
	for _, th := range threads {
		// Three checkpoints; only the latest's status and time count.
		for seq := int64(1); seq <= 3; seq++ {
			cp := &magen.Checkpoint{ThreadID: th.id, Seq: seq, Parent: seq - 1, Status: magen.StatusAwaiting,
				Time: now.Add(-th.age - time.Duration(3-seq)*time.Hour)}
			if seq == 3 {
				cp.Status = th.status
			}
			if err := s.Save(ctx, cp); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Prune(ctx, -time.Second); err == nil {
		t.Errorf("Prune(-1s) = nil error, want an error")
	}
	n, err := s.Prune(ctx, 24*time.Hour)
	if err != nil || n != 2 {
		t.Errorf("Prune(24h) = %d, %v; want 2, nil", n, err)
	}
	for _, th := range threads {
		_, err := s.History(ctx, th.id)
		if gone := errors.Is(err, magen.ErrThreadNotFound); gone != th.pruned {
			t.Errorf("after Prune, History(%s) = %v; want pruned %v", th.id, err, th.pruned)
		}
	}
	var orphans int
	if err := magen.SQLiteDB(s).QueryRow(`SELECT count(*) FROM checkpoints WHERE thread LIKE 'old-%ed' AND thread != 'old-awaiting'`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d checkpoint rows of pruned threads left, %v; want 0", orphans, err)
	}
	if n, err := s.Prune(ctx, 24*time.Hour); err != nil || n != 0 {
		t.Errorf("second Prune(24h) = %d, %v; want 0, nil", n, err)
	}
	if n, err := s.Prune(ctx, 0); err != nil || n != 2 {
		t.Errorf("Prune(0) = %d, %v; want 2 (the two recent finished threads)", n, err)
	}
	// A pruned thread is unknown again.
	if err := s.Save(ctx, &magen.Checkpoint{ThreadID: "old-completed", Seq: 1}); err != nil {
		t.Errorf("Save(seq 1) on a pruned thread = %v, want nil", err)
	}
}

// TestSQLiteTwoStoresOneThread resumes one thread from two stores with
// separate connection pools on one file, as two servers would. A barrier
// in the node makes both turns load the thread before either saves, so
// the conditional write is what decides: exactly one advances, and the
// other gets ErrConflict.
func TestSQLiteTwoStoresOneThread(t *testing.T) {
	ctx := t.Context()
	path := sqTempPath(t)
	var barrier *sqBarrier
	step := func(ctx context.Context, s sqState) (sqState, error) {
		barrier.wait()
		return sqAsk("Give a number.")(ctx, s)
	}
	var orchs []*magen.Orchestrator[sqState]
	for range 2 {
		o, err := magen.New(sqLoop(100, step), magen.WithCheckpointer(sqOpen(t, path)))
		if err != nil {
			t.Fatal(err)
		}
		orchs = append(orchs, o)
	}
	barrier = &sqBarrier{n: 1}
	r, err := orchs[0].Run(ctx, magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 10
	for round := range rounds {
		barrier = &sqBarrier{n: 2}
		var wg sync.WaitGroup
		results := make([]*magen.Result, 2)
		errs := make([]error, 2)
		for i, o := range orchs {
			wg.Go(func() {
				results[i], errs[i] = o.Run(ctx, magen.Input{UserInput: sqAnswerTo(r.StateData.Seq), StateData: r.StateData})
			})
		}
		wg.Wait()
		var winner *magen.Result
		for i := range 2 {
			switch {
			case errs[i] == nil && winner != nil:
				t.Fatalf("round %d: both stores advanced the thread", round)
			case errs[i] == nil:
				winner = results[i]
			case !errors.Is(errs[i], magen.ErrConflict):
				t.Fatalf("round %d: Run %d = %v, want nil or ErrConflict", round, i, errs[i])
			}
		}
		if winner == nil {
			t.Fatalf("round %d: neither store advanced the thread: %v", round, errs)
		}
		if winner.StateData.Seq != r.StateData.Seq+1 {
			t.Fatalf("round %d: advanced to %d, want %d", round, winner.StateData.Seq, r.StateData.Seq+1)
		}
		r = winner
	}
	h, err := orchs[1].Checkpointer().History(ctx, r.StateData.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if last, err := sqCheckHistory(h); err != nil || last.Seq != rounds+1 {
		t.Errorf("history ends at %s, %v; want checkpoint %d", cpSeq(last), err, rounds+1)
	}
}

// sqBarrier lets n callers of wait through together, or each after a
// second if the others never come.
type sqBarrier struct {
	n    int
	mu   sync.Mutex
	in   int
	done chan struct{}
}

func (b *sqBarrier) wait() {
	b.mu.Lock()
	if b.done == nil {
		b.done = make(chan struct{})
	}
	b.in++
	if b.in == b.n {
		close(b.done)
	}
	done := b.done
	b.mu.Unlock()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

func cpSeq(cp *magen.Checkpoint) string {
	if cp == nil {
		return "<nil>"
	}
	return fmt.Sprintf("checkpoint %d", cp.Seq)
}
