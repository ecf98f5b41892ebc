package magen

import (
	"context"
	"database/sql"
	"time"
)

// Test hooks into the SQLite store, for package magen_test.

// WithSQLiteBusyTimeout sets how long the store waits for a lock.
func WithSQLiteBusyTimeout(d time.Duration) SQLiteOption { return withBusyTimeout(d) }

// WithSQLiteClock sets the clock Prune measures ages against.
func WithSQLiteClock(now func() time.Time) SQLiteOption { return withSQLiteClock(now) }

// SQLiteSaveAll saves checkpoints in one transaction, for fixtures.
func SQLiteSaveAll(ctx context.Context, s *SQLiteCheckpointer, cps []*Checkpoint) error {
	return s.saveAll(ctx, cps)
}

// SQLiteDB returns the store's database.
func SQLiteDB(s *SQLiteCheckpointer) *sql.DB { return s.db }

// SQLiteSchemaVersion is the schema version the store writes.
var SQLiteSchemaVersion = sqliteSchemaVersion

// SQLiteMigrations are the schema steps, for crafting old files.
var SQLiteMigrations = sqliteMigrations

// SQLiteQueries returns the store's statements by name.
func SQLiteQueries() map[string]string {
	q := sqliteSQL
	return map[string]string{
		"insert": q.insert, "latestSeq": q.latestSeq, "trim": q.trim, "load": q.load, "history": q.history,
		"delete": q.delete, "pruneCount": q.pruneCount, "prune": q.prune,
	}
}
