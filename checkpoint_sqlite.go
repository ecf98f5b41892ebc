package magen

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// SQLiteCheckpointer stores checkpoints in an SQLite database, through the
// pure-Go driver modernc.org/sqlite (no cgo).
//
// Each checkpoint is a row of its own, so a thread's whole history is kept
// unless WithKeepLast says otherwise. Save is one transaction whose write
// is conditional on cp.Parent being the thread's latest checkpoint, checked
// under SQLite's write lock. So an SQLiteCheckpointer is safe for
// concurrent use, and several processes (several MCP servers sharing one
// .magen directory) may use one file at once: two of them resuming the
// same thread can never both advance it; the loser gets an error wrapping
// ErrConflict.
//
// Time is kept to the microsecond and comes back in UTC. Nil and empty
// slices are not told apart. State comes back byte for byte; Next, Pending
// and Resumes are stored as JSON, so their raw JSON values come back
// compacted.
//
// The cost of a turn does not grow with the number of threads stored:
// "latest checkpoint of a thread", "history of a thread" and the
// conditional write are lookups in the (thread, seq) primary key.
type SQLiteCheckpointer struct {
	db     *sql.DB
	owned  bool          // db was opened by OpenSQLite, and Close closes it
	wmu    chan struct{} // serializes this store's writers; SQLite serializes the rest
	cfg    sqliteConfig
	stmts  sqliteStmts
	closed chan struct{}
}

var _ Checkpointer = (*SQLiteCheckpointer)(nil)

// Durability says when a committed checkpoint is safe on disk.
type Durability int

// The durability levels. They set SQLite's PRAGMA synchronous.
const (
	// DurabilityFull syncs the write-ahead log at every commit: a turn that
	// returned survives a power loss. This is the default.
	DurabilityFull Durability = iota
	// DurabilityNormal syncs less often. A committed turn survives a crash
	// of the process, but the last turns before a power loss or an OS
	// crash may be rolled back. The database is never corrupted.
	DurabilityNormal
)

// String returns the PRAGMA synchronous value: "FULL" or "NORMAL".
func (d Durability) String() string {
	switch d {
	case DurabilityFull:
		return "FULL"
	case DurabilityNormal:
		return "NORMAL"
	}
	return "Durability(" + strconv.Itoa(int(d)) + ")"
}

// An SQLiteOption configures an SQLiteCheckpointer. Options are applied in
// order, so the last one of a kind wins. A bad value never panics: the
// constructor returns it, wrapping ErrInvalidOption.
type SQLiteOption interface {
	apply(*sqliteConfig)
}

type sqliteOptionFunc func(*sqliteConfig)

func (f sqliteOptionFunc) apply(c *sqliteConfig) { f(c) }

type sqliteConfig struct {
	durability  Durability
	keepLast    int
	busyTimeout time.Duration
	now         func() time.Time
	errs        []error
}

// DefaultBusyTimeout is how long an SQLiteCheckpointer opened by OpenSQLite
// waits for another process's write to finish before giving up.
const DefaultBusyTimeout = 5 * time.Second

func (c *sqliteConfig) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
}

func newSQLiteConfig(opts []SQLiteOption) (sqliteConfig, error) {
	c := sqliteConfig{durability: DurabilityFull, busyTimeout: DefaultBusyTimeout, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c, errors.Join(c.errs...)
}

// WithDurability sets when a commit is safe on disk: DurabilityFull or
// DurabilityNormal. Default: DurabilityFull.
func WithDurability(d Durability) SQLiteOption {
	return sqliteOptionFunc(func(c *sqliteConfig) {
		if d != DurabilityFull && d != DurabilityNormal {
			c.bad("WithDurability(%d): want DurabilityFull or DurabilityNormal", int(d))
			return
		}
		c.durability = d
	})
}

// WithKeepLast keeps only the last n checkpoints of each thread; older ones
// are deleted in the transaction that saves a new one. 0 keeps them all.
// Default: 0.
func WithKeepLast(n int) SQLiteOption {
	return sqliteOptionFunc(func(c *sqliteConfig) {
		if n < 0 {
			c.bad("WithKeepLast(%d): want 0 (keep all) or more", n)
			return
		}
		c.keepLast = n
	})
}

// withBusyTimeout sets how long OpenSQLite's connections wait for a lock.
// Tests use it to make a locked file fail fast.
func withBusyTimeout(d time.Duration) SQLiteOption {
	return sqliteOptionFunc(func(c *sqliteConfig) {
		if d < 0 {
			c.bad("withBusyTimeout(%v): negative", d)
			return
		}
		c.busyTimeout = d
	})
}

// withSQLiteClock sets the clock Prune measures ages against.
func withSQLiteClock(now func() time.Time) SQLiteOption {
	return sqliteOptionFunc(func(c *sqliteConfig) {
		if now == nil {
			c.bad("withSQLiteClock: nil clock")
			return
		}
		c.now = now
	})
}

// sqliteMigrations are the schema steps, in order: the store's schema
// version is the number of steps applied. Never change a step once
// released; add one.
var sqliteMigrations = [][]string{
	// 1: one row per checkpoint. JSON columns are TEXT so that SQLite's
	// json functions read them; state is a BLOB so that it comes back byte
	// for byte. time is Unix microseconds, UTC.
	{`CREATE TABLE checkpoints (
		thread  TEXT    NOT NULL,
		seq     INTEGER NOT NULL,
		parent  INTEGER NOT NULL,
		time    INTEGER NOT NULL,
		status  TEXT    NOT NULL,
		next    TEXT,
		pending TEXT,
		resumes TEXT,
		state   BLOB,
		error   TEXT    NOT NULL DEFAULT '',
		PRIMARY KEY (thread, seq)
	)`},
	// 2: finished checkpoints by age, for Prune. The index is partial, so
	// the turns that leave a thread waiting do not write to it.
	{`CREATE INDEX checkpoints_finished ON checkpoints (time) WHERE status IN ('completed', 'failed')`},
}

// sqliteSchemaVersion is the schema version this code writes.
var sqliteSchemaVersion = len(sqliteMigrations)

type sqliteStmts struct {
	insert, latestSeq, trim, load, history, delete, pruneCount, prune *sql.Stmt
}

const sqliteColumns = `seq, parent, time, status, next, pending, resumes, state, error`

// sqliteFinished selects the finished threads whose latest checkpoint is
// older than ?1.
const sqliteFinished = `SELECT c.thread FROM checkpoints c
	WHERE c.status IN ('completed', 'failed') AND c.time < ?1
	AND c.seq = (SELECT max(seq) FROM checkpoints WHERE thread = c.thread)`

// sqliteSQL holds the statements, each prepared once per store.
var sqliteSQL = struct {
	insert, latestSeq, trim, load, history, delete, pruneCount, prune string
}{
	// The conditional write is one statement: SQLite takes the write lock
	// before the statement reads the thread's latest seq, so no other
	// writer, in this process or another, can slip in between.
	insert: `INSERT INTO checkpoints (thread, ` + sqliteColumns + `)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
		WHERE coalesce((SELECT max(seq) FROM checkpoints WHERE thread = ?1), 0) = ?3`,
	latestSeq:  `SELECT coalesce(max(seq), 0) FROM checkpoints WHERE thread = ?1`,
	trim:       `DELETE FROM checkpoints WHERE thread = ?1 AND seq <= ?2`,
	load:       `SELECT ` + sqliteColumns + ` FROM checkpoints WHERE thread = ?1 ORDER BY seq DESC LIMIT 1`,
	history:    `SELECT ` + sqliteColumns + ` FROM checkpoints WHERE thread = ?1 ORDER BY seq`,
	delete:     `DELETE FROM checkpoints WHERE thread = ?1`,
	pruneCount: `SELECT count(*) FROM (` + sqliteFinished + `)`,
	prune:      `DELETE FROM checkpoints WHERE thread IN (` + sqliteFinished + `)`,
}

// OpenSQLite opens the checkpoint store at path, creating it if needed. A
// new directory is created 0700 and a new file 0600. The database runs in
// WAL mode with immediate transactions, and waits up to DefaultBusyTimeout
// for another process's write.
//
// It returns an error wrapping ErrSchemaVersion for a store written by a
// newer magen, and migrates an older one forward. Close the store when done.
func OpenSQLite(path string, opts ...SQLiteOption) (*SQLiteCheckpointer, error) {
	s, err := openSQLite(path, opts)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint store %q: %w", path, err)
	}
	return s, nil
}

func openSQLite(path string, opts []SQLiteOption) (*SQLiteCheckpointer, error) {
	cfg, err := newSQLiteConfig(opts)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("%w: empty path", ErrInvalidOption)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	created, err := createPrivate(abs)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*SQLiteCheckpointer, error) {
		if created {
			// Leave nothing half-made behind.
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(abs + suffix)
			}
		}
		return nil, err
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs, cfg))
	if err != nil {
		return fail(err)
	}
	// Writers are serialized anyway; a few connections serve the readers,
	// and keeping them all idle keeps their prepared statements.
	n := min(max(runtime.GOMAXPROCS(0), 4), 16)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	s, err := newSQLite(db, true, cfg)
	if err != nil {
		db.Close()
		return fail(err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		s.Close()
		return fail(err)
	}
	if !strings.EqualFold(mode, "wal") {
		s.Close()
		return fail(fmt.Errorf("journal mode is %q, want WAL", mode))
	}
	if created {
		// SQLite gives the -wal and -shm files the database's mode, but
		// make sure: they hold the same data.
		for _, suffix := range []string{"-wal", "-shm"} {
			if fi, err := os.Stat(abs + suffix); err == nil && fi.Mode().Perm() != 0o600 {
				if err := os.Chmod(abs+suffix, 0o600); err != nil {
					s.Close()
					return fail(err)
				}
			}
		}
	}
	return s, nil
}

// createPrivate makes path's directory (0700, if missing) and the file
// itself (0600, if missing), whatever the umask. It reports whether it
// created the file.
func createPrivate(path string) (created bool, err error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return false, err
		}
	} else if err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Stat(path)
		if err != nil {
			return false, err
		}
		if !fi.Mode().IsRegular() {
			return false, errors.New("not a regular file")
		}
		return false, nil
	case err != nil:
		return false, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(path)
		return false, err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return false, err
	}
	return true, nil
}

// sqliteDSN is the modernc.org/sqlite data source name for the file at
// the absolute path abs.
func sqliteDSN(abs string, cfg sqliteConfig) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+cfg.durability.String()+")")
	q.Set("_txlock", "immediate")
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// NewSQLiteCheckpointer returns a store that uses db, a database opened with
// the "sqlite" driver of modernc.org/sqlite. It creates or migrates the
// schema, like OpenSQLite. Close does not close db.
//
// The caller's data source name decides the journal mode, the busy timeout
// and the transaction mode; open it as OpenSQLite does, with
// "_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_txlock=immediate".
// Every Save sets PRAGMA synchronous on its connection, so WithDurability
// holds whatever the data source name says.
func NewSQLiteCheckpointer(db *sql.DB, opts ...SQLiteOption) (*SQLiteCheckpointer, error) {
	cfg, err := newSQLiteConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new SQLite checkpoint store: %w", err)
	}
	if db == nil {
		return nil, fmt.Errorf("new SQLite checkpoint store: %w: nil *sql.DB", ErrInvalidOption)
	}
	s, err := newSQLite(db, false, cfg)
	if err != nil {
		return nil, fmt.Errorf("new SQLite checkpoint store: %w", err)
	}
	return s, nil
}

func newSQLite(db *sql.DB, owned bool, cfg sqliteConfig) (*SQLiteCheckpointer, error) {
	if err := migrateSQLite(db); err != nil {
		return nil, err
	}
	s := &SQLiteCheckpointer{db: db, owned: owned, cfg: cfg, wmu: make(chan struct{}, 1), closed: make(chan struct{})}
	if err := s.prepare(); err != nil {
		s.closeStmts()
		return nil, err
	}
	return s, nil
}

// migrateSQLite brings the schema up to sqliteSchemaVersion, in one
// transaction, so that two processes opening a new file at once do not
// both create it.
func migrateSQLite(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER NOT NULL PRIMARY KEY,
		applied INTEGER NOT NULL
	)`); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if v > sqliteSchemaVersion {
		return fmt.Errorf("schema version %d, this magen knows up to %d: %w", v, sqliteSchemaVersion, ErrSchemaVersion)
	}
	if v == sqliteSchemaVersion {
		return tx.Commit()
	}
	for i := v; i < sqliteSchemaVersion; i++ {
		for _, q := range sqliteMigrations[i] {
			if _, err := tx.Exec(q); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", i+1, err)
			}
		}
		if _, err := tx.Exec(`INSERT INTO schema_version (version, applied) VALUES (?, ?)`, i+1, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", i+1, err)
		}
	}
	return tx.Commit()
}

func (s *SQLiteCheckpointer) prepare() error {
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = s.db.Prepare(q)
		return st
	}
	q := sqliteSQL
	s.stmts = sqliteStmts{
		insert: p(q.insert), latestSeq: p(q.latestSeq), trim: p(q.trim), load: p(q.load), history: p(q.history),
		delete: p(q.delete), pruneCount: p(q.pruneCount), prune: p(q.prune),
	}
	return err
}

func (s *SQLiteCheckpointer) closeStmts() error {
	var errs []error
	for _, st := range []*sql.Stmt{
		s.stmts.insert, s.stmts.latestSeq, s.stmts.trim, s.stmts.load, s.stmts.history,
		s.stmts.delete, s.stmts.pruneCount, s.stmts.prune,
	} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// Close releases the store. It closes the database only if OpenSQLite
// opened it. Calling Close again does nothing.
func (s *SQLiteCheckpointer) Close() error {
	select {
	case <-s.closed:
		return nil
	default:
		close(s.closed)
	}
	err := s.closeStmts()
	if s.owned {
		err = errors.Join(err, s.db.Close())
	}
	return err
}

// lockWriter takes this store's writer slot, so that its own writers queue
// in Go instead of spinning in SQLite's busy handler.
func (s *SQLiteCheckpointer) lockWriter(ctx context.Context) error {
	select {
	case s.wmu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *SQLiteCheckpointer) unlockWriter() { <-s.wmu }

// begin starts a write transaction; call done after it ends. With
// OpenSQLite's connections it is BEGIN IMMEDIATE. A caller's connection
// gets PRAGMA synchronous first, which SQLite refuses inside a transaction.
func (s *SQLiteCheckpointer) begin(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	if s.owned {
		tx, err := s.db.BeginTx(ctx, nil)
		return tx, func() {}, err
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.ExecContext(ctx, "PRAGMA synchronous = "+s.cfg.durability.String()); err != nil {
		c.Close()
		return nil, nil, err
	}
	if tx, err = c.BeginTx(ctx, nil); err != nil {
		c.Close()
		return nil, nil, err
	}
	return tx, func() { c.Close() }, nil
}

// Save implements Checkpointer, in one transaction: it inserts cp if
// cp.Parent is the thread's latest seq, or returns an error wrapping
// ErrConflict, and trims the thread's history to WithKeepLast.
//
// Without trimming, on a database OpenSQLite opened, the transaction is a
// single INSERT statement that SQLite commits by itself, which saves two
// round trips per turn; otherwise it is BEGIN IMMEDIATE ... COMMIT.
func (s *SQLiteCheckpointer) Save(ctx context.Context, cp *Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateForSave(cp); err != nil {
		return err
	}
	args, err := sqliteArgs(cp)
	if err != nil {
		return fmt.Errorf("save thread %q: %w", cp.ThreadID, err)
	}
	if err := s.lockWriter(ctx); err != nil {
		return err
	}
	defer s.unlockWriter()
	if s.owned && s.cfg.keepLast == 0 {
		res, err := s.stmts.insert.ExecContext(ctx, args...)
		return s.inserted(ctx, nil, cp, res, err)
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("save thread %q: %w", cp.ThreadID, err)
	}
	defer done()
	defer tx.Rollback()
	if err := s.saveTx(ctx, tx, cp, args); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save thread %q: commit: %w", cp.ThreadID, err)
	}
	return nil
}

// saveAll saves checkpoints in one transaction, for loading fixtures fast.
// Each must follow the thread's latest, as with Save.
func (s *SQLiteCheckpointer) saveAll(ctx context.Context, cps []*Checkpoint) error {
	if err := s.lockWriter(ctx); err != nil {
		return err
	}
	defer s.unlockWriter()
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback()
	for _, cp := range cps {
		if err := validateForSave(cp); err != nil {
			return err
		}
		args, err := sqliteArgs(cp)
		if err != nil {
			return err
		}
		if err := s.saveTx(ctx, tx, cp, args); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *SQLiteCheckpointer) saveTx(ctx context.Context, tx *sql.Tx, cp *Checkpoint, args []any) error {
	res, err := tx.StmtContext(ctx, s.stmts.insert).ExecContext(ctx, args...)
	if err := s.inserted(ctx, tx, cp, res, err); err != nil {
		return err
	}
	if k := int64(s.cfg.keepLast); k > 0 && cp.Seq > k {
		if _, err := tx.StmtContext(ctx, s.stmts.trim).ExecContext(ctx, cp.ThreadID, cp.Seq-k); err != nil {
			return fmt.Errorf("save thread %q: trim history: %w", cp.ThreadID, err)
		}
	}
	return nil
}

// inserted checks the outcome of the conditional insert: an error, or a
// conflict if it inserted nothing.
func (s *SQLiteCheckpointer) inserted(ctx context.Context, tx *sql.Tx, cp *Checkpoint, res sql.Result, err error) error {
	if err != nil {
		return fmt.Errorf("save thread %q: %w", cp.ThreadID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("save thread %q: %w", cp.ThreadID, err)
	}
	if n == 1 {
		return nil
	}
	latest := s.stmts.latestSeq
	if tx != nil {
		latest = tx.StmtContext(ctx, latest)
	}
	var seq int64
	if err := latest.QueryRowContext(ctx, cp.ThreadID).Scan(&seq); err != nil {
		return fmt.Errorf("save thread %q: parent %d is not the latest: %w", cp.ThreadID, cp.Parent, ErrConflict)
	}
	return fmt.Errorf("save thread %q: parent %d, latest %d: %w", cp.ThreadID, cp.Parent, seq, ErrConflict)
}

// sqliteArgs returns the insert statement's arguments for cp. Empty JSON
// columns are NULL.
func sqliteArgs(cp *Checkpoint) ([]any, error) {
	enc := func(v any, n int) (any, error) {
		if n == 0 {
			return nil, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidCheckpoint, err)
		}
		return string(b), nil
	}
	next, err := enc(cp.Next, len(cp.Next))
	if err != nil {
		return nil, err
	}
	pending, err := enc(cp.Pending, len(cp.Pending))
	if err != nil {
		return nil, err
	}
	resumes, err := enc(cp.Resumes, len(cp.Resumes))
	if err != nil {
		return nil, err
	}
	var state any
	if cp.State != nil {
		state = []byte(cp.State)
	}
	return []any{cp.ThreadID, cp.Seq, cp.Parent, cp.Time.UnixMicro(), string(cp.Status), next, pending, resumes, state, cp.Error}, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanCheckpoint(threadID string, sc scanner) (*Checkpoint, error) {
	cp := &Checkpoint{ThreadID: threadID}
	var (
		t                      int64
		status                 string
		next, pending, resumes []byte
		state                  []byte
	)
	if err := sc.Scan(&cp.Seq, &cp.Parent, &t, &status, &next, &pending, &resumes, &state, &cp.Error); err != nil {
		return nil, err
	}
	cp.Time = time.UnixMicro(t).UTC()
	cp.Status = Status(status)
	if len(state) > 0 {
		cp.State = json.RawMessage(state)
	}
	for _, f := range []struct {
		raw []byte
		v   any
	}{{next, &cp.Next}, {pending, &cp.Pending}, {resumes, &cp.Resumes}} {
		if f.raw == nil {
			continue
		}
		if err := json.Unmarshal(f.raw, f.v); err != nil {
			return nil, fmt.Errorf("decode checkpoint %d: %w", cp.Seq, err)
		}
	}
	return cp, nil
}

// Load implements Checkpointer.
func (s *SQLiteCheckpointer) Load(ctx context.Context, threadID string) (*Checkpoint, error) {
	cp, err := scanCheckpoint(threadID, s.stmts.load.QueryRowContext(ctx, threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load thread %q: %w", threadID, ErrThreadNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load thread %q: %w", threadID, err)
	}
	return cp, nil
}

// History implements Checkpointer. With WithKeepLast, it returns only the
// checkpoints kept.
func (s *SQLiteCheckpointer) History(ctx context.Context, threadID string) ([]*Checkpoint, error) {
	rows, err := s.stmts.history.QueryContext(ctx, threadID)
	if err != nil {
		return nil, fmt.Errorf("history of thread %q: %w", threadID, err)
	}
	defer rows.Close()
	var out []*Checkpoint
	for rows.Next() {
		cp, err := scanCheckpoint(threadID, rows)
		if err != nil {
			return nil, fmt.Errorf("history of thread %q: %w", threadID, err)
		}
		out = append(out, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history of thread %q: %w", threadID, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("history of thread %q: %w", threadID, ErrThreadNotFound)
	}
	return out, nil
}

// Delete implements Checkpointer.
func (s *SQLiteCheckpointer) Delete(ctx context.Context, threadID string) error {
	if err := s.lockWriter(ctx); err != nil {
		return err
	}
	defer s.unlockWriter()
	if s.owned {
		if _, err := s.stmts.delete.ExecContext(ctx, threadID); err != nil {
			return fmt.Errorf("delete thread %q: %w", threadID, err)
		}
		return nil
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("delete thread %q: %w", threadID, err)
	}
	defer done()
	defer tx.Rollback()
	if _, err := tx.StmtContext(ctx, s.stmts.delete).ExecContext(ctx, threadID); err != nil {
		return fmt.Errorf("delete thread %q: %w", threadID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete thread %q: %w", threadID, err)
	}
	return nil
}

// Prune deletes every finished thread (completed or failed) whose latest
// checkpoint is older than olderThan, by its Time, and returns how many
// threads it deleted. Threads still awaiting a result are kept, however old.
func (s *SQLiteCheckpointer) Prune(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan < 0 {
		return 0, fmt.Errorf("prune: negative age %v", olderThan)
	}
	cutoff := s.cfg.now().Add(-olderThan).UnixMicro()
	if err := s.lockWriter(ctx); err != nil {
		return 0, err
	}
	defer s.unlockWriter()
	tx, done, err := s.begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	defer done()
	defer tx.Rollback()
	var n int
	if err := tx.StmtContext(ctx, s.stmts.pruneCount).QueryRowContext(ctx, cutoff).Scan(&n); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := tx.StmtContext(ctx, s.stmts.prune).ExecContext(ctx, cutoff); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return n, nil
}
