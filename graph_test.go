package magen_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

func nop(ctx context.Context, s docState) (docState, error) { return s, nil }

func TestValidate(t *testing.T) {
	route := func(docState) string { return "x" }
	tests := []struct {
		name  string
		build func(g *magen.Graph[docState])
		want  []string // nodes named by the errors, in order
	}{
		{"valid", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddNode("b", nop).AddEdge(magen.Start, "a").
				AddRoute("a", route, magen.Routes{"x": "b", "y": magen.End, "z": "a"}).AddEdge("b", magen.End)
		}, nil},
		{"missing entry", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge("a", magen.End)
		}, []string{magen.Start, "a"}},
		{"unknown target", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", "nowhere")
		}, []string{"a", "a"}},
		{"unknown source", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End).AddEdge("ghost", "a")
		}, []string{"ghost"}},
		{"duplicate node", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End)
		}, []string{"a"}},
		{"unreachable", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddNode("island", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End).AddEdge("island", magen.End)
		}, []string{"island"}},
		{"dead end", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddNode("b", nop).AddEdge(magen.Start, "a").AddEdge("a", "b")
		}, []string{"b", "a"}},
		{"endless loop", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddNode("b", nop).AddEdge(magen.Start, "a").AddEdge("a", "b").AddEdge("b", "a")
		}, []string{"a", "b"}},
		{"two ways out", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End).AddEdge("a", "a")
		}, []string{"a"}},
		{"reserved and bad names", func(g *magen.Graph[docState]) {
			g.AddNode(magen.End, nop).AddNode("a\nb", nop).AddNode("nil", nil).AddNode("a", nop).
				AddEdge(magen.Start, "a").AddEdge("a", magen.End)
		}, []string{magen.End, "a\nb", "nil"}},
		{"empty route", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge(magen.Start, "a").AddRoute("a", route, nil).AddRoute("a", nil, magen.Routes{"x": magen.End})
		}, []string{"a", "a", "a"}},
		{"edge out of End", func(g *magen.Graph[docState]) {
			g.AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End).AddEdge(magen.End, "a")
		}, []string{magen.End}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := magen.NewGraph[docState]()
			tc.build(g)
			err := g.Validate()
			var got []string
			for _, e := range unjoin(err) {
				var ne *magen.NodeError
				if !errors.As(e, &ne) || !errors.Is(e, magen.ErrInvalidGraph) {
					t.Errorf("error %v is not a *NodeError wrapping ErrInvalidGraph", e)
					continue
				}
				got = append(got, ne.Node)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() named nodes (-want +got):\n%s\nerror: %v", diff, err)
			}
			// New reports the same problems.
			if _, err := magen.New(g); (err == nil) != (tc.want == nil) {
				t.Errorf("New() = %v, want an error: %v", err, tc.want != nil)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestNewJoinsEveryProblem(t *testing.T) {
	g := magen.NewGraph[docState]().AddNode("a", nop) // no entry, no exit
	_, err := magen.New(g,
		magen.WithToolID("has spaces"),
		magen.WithStepLimit(0),
		magen.WithCheckpointer(nil),
		magen.WithMaxInputBytes(1),
		magen.WithInputSchema([]byte(`[]`)),
		magen.WithInitialState(func(context.Context, json.RawMessage) (int, error) { return 0, nil }),
	)
	if err == nil {
		t.Fatal("New accepted bad options")
	}
	msg := err.Error()
	for _, want := range []string{"WithToolID", "WithStepLimit(0)", "WithCheckpointer", "WithMaxInputBytes(1)", "WithInputSchema", "WithInitialState: function makes int", `node "__start__"`, `node "a"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("New error does not mention %q:\n%s", want, msg)
		}
	}
	if !errors.Is(err, magen.ErrInvalidOption) || !errors.Is(err, magen.ErrInvalidGraph) {
		t.Errorf("New error does not wrap ErrInvalidOption and ErrInvalidGraph")
	}
}

func TestGraphSnapshot(t *testing.T) {
	g := magen.NewGraph[docState]().AddNode("a", nop).AddEdge(magen.Start, "a").AddEdge("a", magen.End)
	o := mustNew(t, g)
	g.AddNode("late", nop) // would make the graph invalid
	if r, err := o.Run(context.Background(), magen.Input{}); err != nil || r.Status != magen.StatusCompleted {
		t.Errorf("Run = %+v, %v; the orchestrator must not see later changes", r, err)
	}
}

func TestMermaid(t *testing.T) {
	golden(t, "mermaid/doc.mmd", docGraph(&counters{}).Mermaid())
}

// golden compares got with testdata/name, or rewrites it with -update
// (the flag magentest defines).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if magentest.Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is stale (-want +got); review, then run go test -update:\n%s", path, diff)
	}
}

func TestRouteOutcomesSorted(t *testing.T) {
	m := docGraph(&counters{}).Mermaid()
	i, j := strings.Index(m, `"approved"`), strings.Index(m, `"rejected"`)
	if i < 0 || j < 0 || !slices.IsSorted([]int{i, j}) {
		t.Errorf("routed edges missing or unordered:\n%s", m)
	}
}
