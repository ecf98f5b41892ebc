package magen_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/magen-go/magen"
	sqlite3 "modernc.org/sqlite/lib"
)

func TestSQLiteOptionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		open func(path string) (*magen.SQLiteCheckpointer, error)
		want int // how many errors wrap ErrInvalidOption
	}{
		{"negative keep", func(p string) (*magen.SQLiteCheckpointer, error) { return magen.OpenSQLite(p, magen.WithKeepLast(-1)) }, 1},
		{"unknown durability", func(p string) (*magen.SQLiteCheckpointer, error) {
			return magen.OpenSQLite(p, magen.WithDurability(magen.Durability(7)))
		}, 1},
		{"both, and a nil option", func(p string) (*magen.SQLiteCheckpointer, error) {
			return magen.OpenSQLite(p, magen.WithKeepLast(-1), nil, magen.WithDurability(-1))
		}, 2},
		{"empty path", func(string) (*magen.SQLiteCheckpointer, error) { return magen.OpenSQLite("") }, 1},
		{"nil db", func(string) (*magen.SQLiteCheckpointer, error) { return magen.NewSQLiteCheckpointer(nil) }, 1},
		{"bad option with a db", func(string) (*magen.SQLiteCheckpointer, error) {
			return magen.NewSQLiteCheckpointer(&sql.DB{}, magen.WithKeepLast(-5))
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"), "state.db")
			s, err := tc.open(path)
			if err == nil {
				s.Close()
				t.Fatalf("open = nil error, want one wrapping ErrInvalidOption")
			}
			if !errors.Is(err, magen.ErrInvalidOption) {
				t.Errorf("open = %v, want an error wrapping ErrInvalidOption", err)
			}
			if got := strings.Count(err.Error(), "invalid option"); got != tc.want {
				t.Errorf("open = %v: %d problems reported, want %d", err, got, tc.want)
			}
			if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat(dir) = %v after a bad option, want nothing created", err)
			}
		})
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	garbage := bytes.Repeat([]byte("this is not an SQLite database, just text. "), 200)
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, dir string) string // returns the path to open
		check    func(err error) bool
		wantText string
	}{
		{"parent is a regular file", func(t *testing.T, dir string) string {
			f := filepath.Join(dir, "file")
			writeFile(t, f, []byte("x"))
			return filepath.Join(f, ".magen", "state.db")
		}, func(err error) bool { var pe *fs.PathError; return errors.As(err, &pe) }, "not a directory"},
		{"path is a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "state.db")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, func(err error) bool { return err != nil }, "not a regular file"},
		{"damaged file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "state.db")
			writeFile(t, p, garbage)
			return p
		}, func(err error) bool { return sqliteCode(err) == sqlite3.SQLITE_NOTADB }, "not a database"},
		{"read-only directory", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes to read-only directories")
			}
			ro := filepath.Join(dir, "ro")
			if err := os.Mkdir(ro, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(ro, 0o700) })
			return filepath.Join(ro, "state.db")
		}, func(err error) bool { return errors.Is(err, fs.ErrPermission) }, "permission denied"},
		{"read-only directory, existing file", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes to read-only directories")
			}
			ro := filepath.Join(dir, "ro")
			p := filepath.Join(ro, "state.db")
			s, err := magen.OpenSQLite(p)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := os.Chmod(ro, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(ro, 0o700) })
			return p
		}, func(err error) bool { return sqliteCode(err) == sqlite3.SQLITE_READONLY }, "readonly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := snapshotDir(t, dir)
			s, err := magen.OpenSQLite(path)
			if err == nil {
				s.Close()
				t.Fatalf("OpenSQLite(%s) = nil error, want one", path)
			}
			t.Logf("OpenSQLite: %v", err)
			if !tc.check(err) {
				t.Errorf("OpenSQLite = %v (%T), not the kind of error wanted", err, errors.Unwrap(err))
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("OpenSQLite = %q, want a message naming %s and saying %q", err, path, tc.wantText)
			}
			if d := cmp.Diff(before, snapshotDir(t, dir)); d != "" {
				t.Errorf("OpenSQLite changed the files (-before +after):\n%s", d)
			}
		})
	}
}

// TestSQLiteDamagedPages corrupts the inside of a real store: no call may
// panic, and the damage must be reported, not papered over.
func TestSQLiteDamagedPages(t *testing.T) {
	ctx := t.Context()
	path := sqTempPath(t)
	s, err := magen.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	var cps []*magen.Checkpoint
	for i := range 300 {
		cps = append(cps, &magen.Checkpoint{ThreadID: fmt.Sprintf("thread-%03d", i), Seq: 1, Status: magen.StatusAwaiting,
			State: json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 500)))})
	}
	if err := magen.SQLiteSaveAll(ctx, s, cps); err != nil {
		t.Fatal(err)
	}
	s.Close() // checkpoints the WAL into the file
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 40<<10 {
		t.Fatalf("file is only %d bytes", len(data))
	}
	for i := 8 << 10; i < len(data)-4096; i += 4096 * 3 {
		copy(data[i+100:], bytes.Repeat([]byte{0xA5}, 1500))
	}
	writeFile(t, path, data)
	if v, err := sqIntegrity(path); err == nil && v == "ok" {
		t.Fatalf("integrity_check = ok after scribbling over pages; the test damaged nothing")
	}
	s, err = magen.OpenSQLite(path)
	if err != nil {
		t.Logf("OpenSQLite(damaged) = %v", err)
		return
	}
	defer s.Close()
	var failures int
	for _, cp := range cps {
		if _, err := s.Load(ctx, cp.ThreadID); err != nil {
			failures++
		}
		s.History(ctx, cp.ThreadID)
		s.Save(ctx, &magen.Checkpoint{ThreadID: cp.ThreadID, Seq: 2, Parent: 1})
	}
	if failures == 0 {
		t.Errorf("every Load succeeded on a damaged file; want the damage reported")
	}
}

// TestSQLiteLocked holds an exclusive lock from another connection: opening
// the store and running a turn must fail with SQLITE_BUSY after the busy
// timeout, change nothing, and work again once the lock is gone.
func TestSQLiteLocked(t *testing.T) {
	ctx := t.Context()
	path := sqTempPath(t)
	s := sqOpen(t, path, magen.WithSQLiteBusyTimeout(50*time.Millisecond))
	o, err := magen.New(sqThreeSteps(), magen.WithCheckpointer(s))
	if err != nil {
		t.Fatal(err)
	}
	r, err := o.Run(ctx, magen.Input{})
	if err != nil {
		t.Fatal(err)
	}

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	s2, err := magen.OpenSQLite(path, magen.WithSQLiteBusyTimeout(100*time.Millisecond))
	if err == nil {
		s2.Close()
		t.Errorf("OpenSQLite while another connection holds an exclusive lock = nil error, want SQLITE_BUSY")
	} else if sqliteCode(err) != sqlite3.SQLITE_BUSY || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenSQLite while locked = %v, want SQLITE_BUSY naming the path", err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("OpenSQLite while locked took %v; the busy timeout is 100ms", d)
	}

	if _, err := o.Run(ctx, magen.Input{UserInput: sqAnswerTo(1), StateData: r.StateData}); sqliteCode(err) != sqlite3.SQLITE_BUSY {
		t.Errorf("Run while locked = %v, want SQLITE_BUSY", err)
	}
	if _, err := lock.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if cp, err := s.Load(ctx, r.StateData.ThreadID); err != nil || cp.Seq != 1 {
		t.Fatalf("Load after the failed turn = %s, %v; want checkpoint 1, nothing half-written", cpSeq(cp), err)
	}
	r2, err := o.Run(ctx, magen.Input{UserInput: sqAnswerTo(1), StateData: r.StateData})
	if err != nil || r2.StateData.Seq != 2 {
		t.Fatalf("Run after the lock is gone = %+v, %v; want checkpoint 2", r2, err)
	}
	h, err := s.History(ctx, r.StateData.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqCheckHistory(h); err != nil {
		t.Error(err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// snapshotDir returns the files under dir with their contents' sizes and
// modes, to show that a failed open changed nothing.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		desc := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %d bytes %x", len(b), b[:min(len(b), 32)])
		}
		m[p] = desc
		return nil
	})
	return m
}
