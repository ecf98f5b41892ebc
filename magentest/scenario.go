package magentest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/magen-go/magen"
)

// packageDir is the directory the test binary started in: its package's
// directory, even if a test later calls t.Chdir.
var packageDir, _ = os.Getwd()

// New returns a harness for g that is closed when the test ends. It stops
// the test if the orchestrator cannot be built.
func New[S any](t testing.TB, g *magen.Graph[S], opts ...magen.Option) *Harness[S] {
	t.Helper()
	h, err := NewHarness(g, opts...)
	if err != nil {
		t.Fatalf("magentest: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// Play runs a workflow from start with a fake LLM scripted by turns, and
// reports every problem with t.Errorf: rejected calls, unexpected or
// leftover turns (each with the file:line of its row), and lint findings.
func (h *Harness[S]) Play(t testing.TB, start any, turns ...Turn) *Outcome[S] {
	t.Helper()
	out, err := h.Run(t.Context(), start, NewLLM(turns...))
	if err != nil {
		t.Errorf("magentest: %v", err)
	}
	return out
}

// Scenario is one row of a table-driven workflow test.
type Scenario[S any] struct {
	Name  string
	Start any    // the first call's userInput; nil for none
	Turns []Turn // the fake LLM's answers, in order
	// Want is the expected final state, compared with go-cmp.
	Want S
	// Status is the expected final status. Default: StatusCompleted.
	Status magen.Status
	// Calls, if not 0, is the expected number of tool calls.
	Calls int
	// Golden, if set, names a directory under the package's testdata/ that
	// holds every prompt of the run; see CheckGolden. Rewrite it with
	// go test -update.
	Golden string
	// CmpOptions are passed to cmp.Diff when comparing states.
	CmpOptions []cmp.Option
}

// RunScenarios runs each scenario as a subtest, on a fresh harness for
// graph() with opts, and reports where the outcome differs from the row.
func RunScenarios[S any](t *testing.T, graph func() *magen.Graph[S], scenarios []Scenario[S], opts ...magen.Option) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Helper()
			h := New(t, graph(), opts...)
			out := h.Play(t, sc.Start, sc.Turns...)
			CheckOutcome(t, sc, out)
		})
	}
}

// CheckOutcome reports with t.Errorf how out differs from what sc expects.
func CheckOutcome[S any](t testing.TB, sc Scenario[S], out *Outcome[S]) {
	t.Helper()
	want := sc.Status
	if want == "" {
		want = magen.StatusCompleted
	}
	if out.Status != want {
		t.Errorf("status = %q, want %q; last prompt:\n%s", out.Status, want, out.Last.Prompt)
	}
	if diff := cmp.Diff(sc.Want, out.State, sc.CmpOptions...); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
	if sc.Calls != 0 && out.Calls != sc.Calls {
		t.Errorf("tool calls = %d, want %d", out.Calls, sc.Calls)
	}
	if sc.Golden != "" {
		if err := CheckGolden(filepath.Join(packageDir, "testdata", sc.Golden), out.Prompts, Updating()); err != nil {
			t.Error(err)
		}
	}
}
