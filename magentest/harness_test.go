package magentest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

type Doc struct {
	Topic    string `json:"topic"`
	Text     string `json:"text,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	Rounds   int    `json:"rounds,omitempty"`
}

type Draft struct {
	Text string `json:"text" jsonschema:"the draft"`
}

type Review struct {
	Approved bool `json:"approved" jsonschema:"whether to publish"`
}

func reviewGraph() *magen.Graph[Doc] {
	return magen.NewGraph[Doc]().
		AddNode("draft", func(ctx context.Context, d Doc) (Doc, error) {
			out, err := magen.Ask[Draft](ctx, magen.Guidance{Task: "Write about " + d.Topic + ".", Example: Draft{Text: "..."}})
			if err != nil {
				return d, err
			}
			d.Text, d.Rounds = out.Text, d.Rounds+1
			return d, nil
		}).
		AddNode("review", func(ctx context.Context, d Doc) (Doc, error) {
			out, err := magen.Ask[Review](ctx, magen.Guidance{Task: "Review: " + d.Text})
			if err != nil {
				return d, err
			}
			d.Approved = out.Approved
			return d, nil
		}).
		AddEdge(magen.Start, "draft").
		AddEdge("draft", "review").
		AddRoute("review", func(d Doc) string { return fmt.Sprint(d.Approved) },
			magen.Routes{"true": magen.End, "false": "draft"})
}

func TestScenarios(t *testing.T) {
	magentest.RunScenarios(t, reviewGraph, []magentest.Scenario[Doc]{{
		Name:  "approved at once",
		Start: Doc{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Answer("draft", Draft{Text: "Go is fun."}),
			magentest.Answer("review", Review{Approved: true}),
		},
		Want:   Doc{Topic: "Go", Text: "Go is fun.", Approved: true, Rounds: 1},
		Calls:  3,
		Golden: "review/approved",
	}, {
		Name:  "rejected once",
		Start: Doc{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Answer("draft", Draft{Text: "Go."}),
			magentest.Answer("review", Review{Approved: false}),
			magentest.Reply("draft", func(p magentest.Prompt) (any, error) {
				return Draft{Text: "Go, longer. " + p.Task.Instructions}, nil
			}),
			magentest.Answer("review", Review{Approved: true}),
		},
		Want:  Doc{Topic: "Go", Text: "Go, longer. Write about Go.", Approved: true, Rounds: 2},
		Calls: 5,
	}, {
		Name:  "invalid answer repaired",
		Start: Doc{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Invalid("draft", map[string]any{"text": 42}),
			magentest.Answer("draft", Draft{Text: "Go."}),
			magentest.Answer("review", Review{Approved: true}),
		},
		Want:   Doc{Topic: "Go", Text: "Go.", Approved: true, Rounds: 1},
		Calls:  4,
		Golden: "review/repaired",
	}})
}

// recorder is a testing.TB that records failures instead of failing, to
// prove that the harness reports what it should.
type recorder struct {
	*testing.T
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.T.Fatalf("unexpected Fatalf: "+format, args...)
}

func (r *recorder) mustReport(t *testing.T, wants ...string) {
	t.Helper()
	all := strings.Join(r.errs, "\n")
	if len(r.errs) == 0 {
		t.Fatalf("nothing was reported, want %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("reports do not mention %q:\n%s", w, all)
		}
	}
}

func TestHarnessReportsFailures(t *testing.T) {
	_, file, _ := strings.Cut(t.Name(), "/")
	_ = file
	t.Run("failing expectation", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		out := h.Play(rec, Doc{Topic: "Go"},
			magentest.Answer("draft", Draft{Text: "x"}),
			magentest.Answer("review", Review{Approved: true}))
		magentest.CheckOutcome(rec, magentest.Scenario[Doc]{Want: Doc{Topic: "Go", Text: "y", Approved: true, Rounds: 1}, Calls: 2}, out)
		rec.mustReport(t, "final state (-want +got)", `-`, `"y"`, "tool calls = 3, want 2")
	})
	t.Run("leftover turn", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		h.Play(rec, Doc{Topic: "Go"},
			magentest.Answer("draft", Draft{Text: "x"}),
			magentest.Answer("review", Review{Approved: true}),
			magentest.Answer("draft", Draft{Text: "never asked"}))
		rec.mustReport(t, "1 scripted turn(s) left over", "harness_test.go:", `expecting node "draft"`)
	})
	t.Run("unexpected node", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		h.Play(rec, Doc{Topic: "Go"},
			magentest.Answer("review", Review{Approved: true}))
		rec.mustReport(t, `expects a task from node "review", got one from node "draft"`, "harness_test.go:")
	})
	t.Run("script runs out", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		h.Play(rec, Doc{Topic: "Go"}, magentest.Answer("draft", Draft{Text: "x"}))
		rec.mustReport(t, `unexpected task from node "review"`)
	})
	t.Run("answer rejected", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		h.Play(rec, Doc{Topic: "Go"}, magentest.Answer("draft", map[string]any{"text": 1}))
		rec.mustReport(t, "was rejected", "Expected: string")
	})
	t.Run("invalid answer accepted", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		h.Play(rec, Doc{Topic: "Go"},
			magentest.Invalid("draft", Draft{Text: "fine"}),
			magentest.Answer("review", Review{Approved: true}))
		rec.mustReport(t, "was accepted, but the turn expects it to be rejected")
	})
	t.Run("wrong status", func(t *testing.T) {
		rec := &recorder{T: t}
		h := magentest.New(rec, reviewGraph())
		out := h.Play(rec, Doc{Topic: "Go"}, magentest.Answer("draft", Draft{Text: "x"}), magentest.Answer("review", Review{Approved: true}))
		magentest.CheckOutcome(rec, magentest.Scenario[Doc]{Want: out.State, Status: magen.StatusFailed}, out)
		rec.mustReport(t, `status = "completed", want "failed"`)
	})
}

func TestStaleGoldenIsReported(t *testing.T) {
	dir := t.TempDir()
	h := magentest.New(t, reviewGraph())
	out := h.Play(t, Doc{Topic: "Go"}, magentest.Answer("draft", Draft{Text: "x"}), magentest.Answer("review", Review{Approved: true}))
	if err := magentest.CheckGolden(dir, out.Prompts, true); err != nil {
		t.Fatal(err)
	}
	if err := magentest.CheckGolden(dir, out.Prompts, false); err != nil {
		t.Fatalf("fresh golden files do not match: %v", err)
	}
	first := filepath.Join(dir, magentest.GoldenName(out.Prompts[0]))
	if err := os.WriteFile(first, []byte("an older prompt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "99-gone.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := magentest.CheckGolden(dir, out.Prompts, false)
	for _, want := range []string{"01-draft.md is stale", "an older prompt", "99-gone.md: golden file for a prompt the run no longer produces"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckGolden = %v, want it to mention %q", err, want)
		}
	}
	os.Remove(filepath.Join(dir, magentest.GoldenName(out.Prompts[1])))
	if err := magentest.CheckGolden(dir, out.Prompts, false); err == nil || !strings.Contains(err.Error(), "missing golden file") {
		t.Errorf("CheckGolden with a missing file = %v", err)
	}
}

func TestLint(t *testing.T) {
	tests := []struct {
		name string
		task magen.Task
		want []string
	}{
		{"clean", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "do",
			ResultSchema: []byte(`{"type":"object","properties":{"a":{"type":"string","description":"an a"}}}`)}, nil},
		{"empty task", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "  ",
			ResultSchema: []byte(`{"type":"object"}`)}, []string{"empty task text"}},
		{"not an object", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "do",
			ResultSchema: []byte(`{"type":"string"}`)}, []string{"not an object schema"}},
		{"does not compile", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "do",
			ResultSchema: []byte(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)}, []string{"does not compile"}},
		{"bad example", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "do", Example: []byte(`{"a":1}`),
			ResultSchema: []byte(`{"type":"object","properties":{"a":{"type":"string","description":"an a"}}}`)}, []string{"example does not match", "Expected: string"}},
		{"undescribed", magen.Task{NodeID: "n", Kind: magen.KindGuidance, Instructions: "do",
			ResultSchema: []byte(`{"type":"object","properties":{"a":{"type":"object","description":"x","properties":{"b":{"type":"string"}}},"c":{"type":"array","description":"y","items":{"type":"object","properties":{"d":{"type":"integer"}}}}}}`)},
			[]string{`"a.b" has no description`, `"c[].d" has no description`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := magentest.Lint(tc.task)
			if (err != nil) != (tc.want != nil) {
				t.Fatalf("Lint = %v, want findings %q", err, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Lint = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestLintRunsInHarness(t *testing.T) {
	type Vague struct {
		Answer string `json:"answer"`
	}
	g := magen.NewGraph[Doc]().
		AddNode("vague", func(ctx context.Context, d Doc) (Doc, error) {
			_, err := magen.Ask[Vague](ctx, magen.Guidance{Task: "answer"})
			return d, err
		}).
		AddEdge(magen.Start, "vague").AddEdge("vague", magen.End)
	rec := &recorder{T: t}
	h := magentest.New(rec, g)
	h.Play(rec, nil, magentest.Answer("vague", Vague{Answer: "x"}))
	rec.mustReport(t, `property "answer" has no description`)

	quiet := magentest.New(t, g)
	quiet.Lint = false
	quiet.Play(t, nil, magentest.Answer("vague", Vague{Answer: "x"}))
}

func TestRunWithoutT(t *testing.T) {
	h, err := magentest.NewHarness(reviewGraph())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	llm := magentest.NewLLM(magentest.Answer("draft", Draft{Text: "x"}), magentest.Answer("review", Review{Approved: true}))
	out, err := h.Run(context.Background(), Doc{Topic: "Go"}, llm)
	if err != nil || out.Status != magen.StatusCompleted || out.Calls != 3 || len(llm.Prompts()) != 3 {
		t.Errorf("Run = %+v, %v", out, err)
	}
	if llm.Err() != nil {
		t.Errorf("Err = %v", llm.Err())
	}
}
