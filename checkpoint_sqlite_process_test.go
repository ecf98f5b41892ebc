package magen_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/magen-go/magen"
)

// The tests in this file run workflows in helper processes: the test binary
// run again with -test.run=^TestSQLiteHelperProcess$ and the environment
// variable below naming what to do.
const (
	sqHelperEnv     = "MAGEN_SQLITE_HELPER" // "crash" or "race"
	sqHelperPathEnv = "MAGEN_SQLITE_HELPER_PATH"
	sqHelperStopEnv = "MAGEN_SQLITE_HELPER_STOP" // crash: finish the current workflow, then exit
	sqCrashTurns    = 10                         // asks per workflow of the crash test
)

// TestSQLiteHelperProcess is not a test: it is the body of the helper
// processes, and does nothing in a normal run.
func TestSQLiteHelperProcess(t *testing.T) {
	mode := os.Getenv(sqHelperEnv)
	if mode == "" {
		t.Skip("runs only as a helper process")
	}
	var err error
	switch mode {
	case "crash":
		err = sqCrashHelper(t.Context(), os.Getenv(sqHelperPathEnv), os.Getenv(sqHelperStopEnv) != "")
	case "race":
		err = sqRaceHelper(t.Context(), os.Getenv(sqHelperPathEnv), os.Stdin)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Printf("helper error: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func sqHelper(t *testing.T, mode, path string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), sqHelperEnv+"="+mode, sqHelperPathEnv+"="+path)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// sqCrashThread names the i-th workflow of the crash test.
func sqCrashThread(i int) string { return fmt.Sprintf("wf-%05d", i) }

// sqCrashHelper runs workflows wf-00000, wf-00001, ... one after the other,
// each resumed from its latest checkpoint, and prints "turn <thread>
// <seq>" after each turn returns. It never ends unless stop is set, in
// which case it finishes the first workflow it advances and prints "done".
func sqCrashHelper(ctx context.Context, path string, stop bool) error {
	store, err := magen.OpenSQLite(path)
	if err != nil {
		return err
	}
	defer store.Close()
	var id string
	o, err := magen.New(sqLoop(sqCrashTurns, sqAsk("Give the number.")),
		magen.WithCheckpointer(store), magen.WithIDSource(func() string { return id }))
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		id = sqCrashThread(i)
		ran := false
		for {
			var in magen.Input
			cp, err := store.Load(ctx, id)
			switch {
			case errors.Is(err, magen.ErrThreadNotFound):
			case err != nil:
				return err
			case cp.Status == magen.StatusCompleted:
			default:
				in = magen.Input{UserInput: sqAnswerTo(cp.Seq), StateData: magen.StateData{ThreadID: id, Seq: cp.Seq}}
			}
			if cp != nil && cp.Status == magen.StatusCompleted {
				break
			}
			r, err := o.Run(ctx, in)
			if err != nil {
				return err
			}
			if r.StateData.ThreadID != id {
				return fmt.Errorf("turn ran thread %q, want %q", r.StateData.ThreadID, id)
			}
			if _, err := fmt.Fprintf(os.Stdout, "turn %s %d\n", id, r.StateData.Seq); err != nil {
				return err
			}
			ran = true
		}
		if stop && ran {
			fmt.Println("done")
			return nil
		}
	}
}

// TestSQLiteCrash kills a helper process that runs workflows on a real
// file with SIGKILL at random points, many times, and starts a new one
// after each kill. After each kill the file must pass integrity_check,
// every turn a helper reported must be there, and every thread must hold
// exactly the answers of its turns: none lost, none applied twice.
func TestSQLiteCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for several seconds")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and subprocesses")
	}
	path := sqTempPath(t)
	budget := 8 * time.Second
	if d, ok := t.Deadline(); ok && time.Until(d) < 4*budget {
		budget = time.Until(d) / 4
	}
	deadline := time.Now().Add(budget)
	acked := map[string]int64{} // the latest seq a helper reported, by thread
	verified := 0               // threads before this one are complete and checked
	kills, turns := 0, 0

	verify := func(final bool) {
		t.Helper()
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			// Killed before the helper created the store: nothing to check,
			// unless a turn was already reported.
			if len(acked) > 0 {
				t.Fatalf("after %d kills: the store is gone", kills)
			}
			return
		}
		if v, err := sqIntegrity(path); err != nil || v != "ok" {
			t.Fatalf("after %d kills: integrity_check = %q, %v; want ok", kills, v, err)
		}
		s, err := magen.OpenSQLite(path)
		if err != nil {
			t.Fatalf("after %d kills: OpenSQLite = %v", kills, err)
		}
		defer s.Close()
		for i := verified; ; i++ {
			id := sqCrashThread(i)
			h, err := s.History(t.Context(), id)
			if errors.Is(err, magen.ErrThreadNotFound) {
				if _, ok := acked[id]; ok {
					t.Fatalf("after %d kills: thread %s was reported but is gone", kills, id)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last, err := sqCheckHistory(h)
			if err != nil {
				t.Fatalf("after %d kills: thread %s: %v", kills, id, err)
			}
			if acked[id] > last.Seq {
				t.Fatalf("after %d kills: thread %s: turn %d was reported, but the latest checkpoint is %d: a committed turn was lost", kills, id, acked[id], last.Seq)
			}
			switch {
			case last.Status == magen.StatusCompleted && last.Seq == sqCrashTurns+1:
				if i == verified {
					verified++
				}
			case last.Status == magen.StatusCompleted:
				t.Fatalf("after %d kills: thread %s completed at checkpoint %d, want %d", kills, id, last.Seq, sqCrashTurns+1)
			case final:
				t.Fatalf("thread %s is %s at checkpoint %d after the final run, want completed", id, last.Status, last.Seq)
			}
		}
	}

	run := func(stop bool) (exited error) {
		t.Helper()
		var env []string
		if stop {
			env = append(env, sqHelperStopEnv+"=1")
		}
		cmd := sqHelper(t, "crash", path, env...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		record := func(line string) {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == "turn" {
				if seq, err := strconv.ParseInt(f[2], 10, 64); err == nil {
					acked[f[1]] = max(acked[f[1]], seq)
					turns++
				}
			} else if strings.HasPrefix(line, "helper error") {
				t.Errorf("crash helper: %s", line)
			}
		}
		if !stop {
			// Kill it at a random point: mostly while it runs turns,
			// sometimes while it starts up.
			if rand.IntN(5) > 0 {
				select {
				case l, ok := <-lines:
					if ok {
						record(l)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the crash helper reported no turn in 10s")
				}
			}
			time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
			cmd.Process.Kill()
		}
		for l := range lines {
			record(l)
		}
		return cmd.Wait()
	}

	for time.Now().Before(deadline) {
		err := run(false)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("crash helper exited with %v before it was killed", err)
		}
		kills++
		verify(false)
	}
	if err := run(true); err != nil {
		t.Fatalf("final crash helper run = %v", err)
	}
	verify(true)
	t.Logf("%d kills, %d turns reported, %d workflows completed", kills, turns, verified)
	if kills < 20 || verified < 2 {
		t.Errorf("only %d kills and %d completed workflows: the test proved little", kills, verified)
	}
}

// sqRaceHelper resumes the threads named on in, one per line as "<thread>
// <seq> <barrier dir>", and prints the outcome of each as "advanced <seq>",
// "conflict" or "error <text>". The node waits at a barrier in the file
// system until both helpers have loaded the thread, so that both try to
// save on the same parent.
func sqRaceHelper(ctx context.Context, path string, in io.Reader) error {
	store, err := magen.OpenSQLite(path)
	if err != nil {
		return err
	}
	defer store.Close()
	var barrier string
	step := func(ctx context.Context, s sqState) (sqState, error) {
		if err := sqFileBarrier(barrier, 2); err != nil {
			return s, err
		}
		return sqAsk("Give a number.")(ctx, s)
	}
	o, err := magen.New(sqLoop(1000, step), magen.WithCheckpointer(store))
	if err != nil {
		return err
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var thread string
		var seq int64
		if _, err := fmt.Sscan(sc.Text(), &thread, &seq, &barrier); err != nil {
			return fmt.Errorf("bad request %q: %w", sc.Text(), err)
		}
		r, err := o.Run(ctx, magen.Input{UserInput: sqAnswerTo(seq), StateData: magen.StateData{ThreadID: thread, Seq: seq}})
		switch {
		case err == nil:
			fmt.Printf("advanced %d\n", r.StateData.Seq)
		case errors.Is(err, magen.ErrConflict):
			fmt.Println("conflict")
		default:
			fmt.Printf("error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return sc.Err()
}

// sqFileBarrier marks this process's arrival in dir and waits up to 5s
// until n processes have arrived.
func sqFileBarrier(dir string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o600); err != nil {
		return err
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if es, err := os.ReadDir(dir); err != nil || len(es) >= n {
			return err
		}
	}
	return nil
}

// TestSQLiteTwoProcessesOneThread has two helper processes resume the same
// awaiting thread at once, with the same answer, many times: exactly one
// advances it each time, and the other is told it lost with ErrConflict.
func TestSQLiteTwoProcessesOneThread(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs subprocesses")
	}
	ctx := t.Context()
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	path := sqTempPath(t)
	store := sqOpen(t, path)
	o, err := magen.New(sqLoop(1000, sqAsk("Give a number.")), magen.WithCheckpointer(store))
	if err != nil {
		t.Fatal(err)
	}
	r, err := o.Run(ctx, magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	thread := r.StateData.ThreadID

	type helper struct {
		in  io.WriteCloser
		out *bufio.Scanner
		cmd *exec.Cmd
	}
	var helpers []helper
	for range 2 {
		cmd := sqHelper(t, "race", path)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := helper{in, bufio.NewScanner(out), cmd}
		t.Cleanup(func() { h.in.Close(); h.cmd.Wait() })
		if !h.out.Scan() || h.out.Text() != "ready" {
			t.Fatalf("race helper: got %q, %v; want ready", h.out.Text(), h.out.Err())
		}
		helpers = append(helpers, h)
	}

	seq := r.StateData.Seq
	for round := range rounds {
		barrier := t.TempDir()
		for _, h := range helpers {
			if _, err := fmt.Fprintf(h.in, "%s %d %s\n", thread, seq, barrier); err != nil {
				t.Fatal(err)
			}
		}
		var outcomes []string
		for i, h := range helpers {
			if !h.out.Scan() {
				t.Fatalf("round %d: helper %d said nothing: %v", round, i, h.out.Err())
			}
			outcomes = append(outcomes, h.out.Text())
		}
		want := fmt.Sprintf("advanced %d", seq+1)
		if !(outcomes[0] == want && outcomes[1] == "conflict") && !(outcomes[0] == "conflict" && outcomes[1] == want) {
			t.Fatalf("round %d: outcomes %q, want one %q and one \"conflict\"", round, outcomes, want)
		}
		seq++
	}
	h, err := store.History(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	if last, err := sqCheckHistory(h); err != nil || last.Seq != int64(rounds)+1 {
		t.Errorf("history ends at %s, %v; want checkpoint %d", cpSeq(last), err, rounds+1)
	}
}
