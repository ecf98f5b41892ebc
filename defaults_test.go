package magen_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/magen-go/magen"
)

// TestDefaultStoreSurvivesRestart runs a workflow across two orchestrators
// on the same directory, as across a server restart.
func TestDefaultStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	o1, n1 := newDoc(t, magen.WithDir(dir))
	first, err := o1.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"topic":"Go"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := o1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	o2, n2 := newDoc(t, magen.WithDir(dir))
	defer o2.Close()
	r, err := o2.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"text":"draft"}`), StateData: first.StateData})
	if err != nil || r.Task == nil || r.Task.NodeID != "review" || r.StateData.Seq != 2 {
		t.Fatalf("resume after restart = %+v, %v", r, err)
	}
	if n1.draft.Load() != 1 || n2.draft.Load() != 1 {
		t.Errorf("draft ran %d then %d times, want 1 and 1", n1.draft.Load(), n2.draft.Load())
	}

	for name, want := range map[string]os.FileMode{".magen": 0o700 | os.ModeDir, ".magen/workflow-state.db": 0o600, ".magen/workflow_logs.json": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
	f, err := os.Open(filepath.Join(dir, ".magen/workflow_logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec["msg"] == nil {
			t.Errorf("log line %q is not a JSON record: %v", sc.Text(), err)
		}
	}
	if lines < 3 {
		t.Errorf("the log has %d lines, want the turns logged", lines)
	}
}

func TestProjectPathAndLogLevel(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROJECT_PATH", dir)
	t.Setenv("LOG_LEVEL", "debug")
	o, _ := newDoc(t)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	// A retry with a stale seq is logged at debug.
	if _, err := o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"text":"x"}`), StateData: r.StateData}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"text":"x"}`), StateData: r.StateData}); err != nil {
		t.Fatal(err)
	}
	o.Close()
	logs, err := os.ReadFile(filepath.Join(dir, ".magen", "workflow_logs.json"))
	if err != nil || !strings.Contains(string(logs), `"level":"DEBUG","msg":"replay"`) {
		t.Errorf("debug log missing from %s: %v\n%s", filepath.Join(dir, ".magen"), err, logs)
	}

	t.Setenv("LOG_LEVEL", "loud")
	if _, err := magen.New(docGraph(&counters{})); err == nil || !strings.Contains(err.Error(), `LOG_LEVEL="loud"`) {
		t.Errorf("New with a bad LOG_LEVEL = %v", err)
	}
}

func TestDefaultStoreErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := magen.New(docGraph(&counters{}), magen.WithDir(file), magen.WithLogger(discard()))
	if err == nil || !strings.Contains(err.Error(), "plain-file") {
		t.Errorf("New under a regular file = %v, want an error naming the path", err)
	}

	damaged := t.TempDir()
	os.MkdirAll(filepath.Join(damaged, ".magen"), 0o700)
	os.WriteFile(filepath.Join(damaged, ".magen", "workflow-state.db"), []byte(strings.Repeat("not a database ", 500)), 0o600)
	_, err = magen.New(docGraph(&counters{}), magen.WithDir(damaged), magen.WithLogger(discard()))
	if err == nil || !strings.Contains(err.Error(), "workflow-state.db") {
		t.Errorf("New on a damaged store = %v", err)
	}
	if _, err := magen.New(docGraph(&counters{}), magen.WithDir("")); !errors.Is(err, magen.ErrInvalidOption) {
		t.Errorf("WithDir(\"\") = %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// An existing .magen with loose modes is made private.
func TestDefaultDirIsTightened(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, ".magen")
	if err := os.Mkdir(m, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(m, 0o755)
	if err := os.WriteFile(filepath.Join(m, "workflow_logs.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(m, "workflow_logs.json"), 0o644)
	o, _ := newDoc(t, magen.WithDir(dir))
	o.Close()
	for name, want := range map[string]os.FileMode{".magen": 0o700 | os.ModeDir, ".magen/workflow_logs.json": 0o600, ".magen/workflow-state.db": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
}

func TestWithSQLiteOptions(t *testing.T) {
	dir := t.TempDir()
	o, _ := newDoc(t, magen.WithDir(dir), magen.WithSQLiteOptions(magen.WithDurability(magen.DurabilityNormal), magen.WithKeepLast(2)))
	ctx := context.Background()
	r, err := o.Run(ctx, magen.Input{})
	for _, answer := range []string{`{"text":"a"}`, `{"approved":false}`, `{"text":"b"}`} {
		if err != nil {
			t.Fatal(err)
		}
		r, err = o.Run(ctx, magen.Input{UserInput: json.RawMessage(answer), StateData: r.StateData})
	}
	h, err := o.Checkpointer().History(ctx, r.StateData.ThreadID)
	if err != nil || len(h) != 2 || h[1].Seq != 4 {
		t.Errorf("History = %d checkpoints, %v; want the last 2 kept by WithKeepLast", len(h), err)
	}
	if _, err := magen.New(docGraph(&counters{}), magen.WithCheckpointer(magen.NewMemoryCheckpointer()),
		magen.WithSQLiteOptions(magen.WithKeepLast(1))); !errors.Is(err, magen.ErrInvalidOption) {
		t.Errorf("WithSQLiteOptions with WithCheckpointer = %v, want ErrInvalidOption", err)
	}
	if _, err := magen.New(docGraph(&counters{}), magen.WithDir(t.TempDir()), magen.WithSQLiteOptions(magen.WithKeepLast(-1))); err == nil {
		t.Errorf("a bad SQLite option was accepted")
	}
}
