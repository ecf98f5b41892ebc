package magen_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

type appState struct {
	Request string           `json:"request"`
	Project magen.InputState `json:"project"`
	Owner   magen.InputState `json:"owner"`
	Summary string           `json:"summary,omitempty"`
}

var projectProps = []magen.Property{
	magen.PropertyOf[string]("name", "project name", "the app's name"),
	{Name: "package", FriendlyName: "package name", Description: "a reverse-DNS package id",
		Schema: json.RawMessage(`{"type":"string","pattern":"^[a-z]+(\\.[a-z]+)+$"}`)},
	magen.PropertyOf[bool]("offline", "offline support", "whether the app works offline"),
	magen.PropertyOf[int]("minSdk", "minimum SDK", "the lowest supported SDK level"),
	{Name: "notes", Description: "anything else", Optional: true},
}

func appGraph(opts ...func(*magen.Inputs[appState])) func() *magen.Graph[appState] {
	return func() *magen.Graph[appState] {
		project := magen.Inputs[appState]{
			Name:       "project",
			Properties: projectProps,
			State:      func(s *appState) *magen.InputState { return &s.Project },
			Source:     func(s appState) string { return s.Request },
			Next:       "owner.extract",
		}
		for _, o := range opts {
			o(&project)
		}
		owner := magen.Inputs[appState]{
			Name:       "owner",
			Properties: []magen.Property{magen.PropertyOf[string]("email", "owner's email", "who owns the app")},
			State:      func(s *appState) *magen.InputState { return &s.Owner },
			Next:       "summarize",
		}
		g := magen.NewGraph[appState]().
			AddNode("summarize", func(ctx context.Context, s appState) (appState, error) {
				var p struct {
					Name    string `json:"name"`
					Offline bool   `json:"offline"`
					MinSdk  int    `json:"minSdk"`
				}
				if err := s.Project.Values.Decode(&p); err != nil {
					return s, err
				}
				s.Summary = p.Name
				return s, nil
			}).
			AddEdge(magen.Start, project.Entry()).
			AddEdge("summarize", magen.End)
		project.AddTo(g)
		owner.AddTo(g)
		return g
	}
}

func vals(kv ...string) magen.Values {
	v := magen.Values{}
	for i := 0; i < len(kv); i += 2 {
		v[kv[i]] = json.RawMessage(kv[i+1])
	}
	return v
}

func extracted(kv map[string]any) map[string]any { return map[string]any{"extractedProperties": kv} }

func TestInputsScenarios(t *testing.T) {
	full := map[string]any{"name": "Notes", "package": "com.example.notes", "offline": false, "minSdk": 0, "notes": nil}
	owner := []magentest.Turn{
		magentest.Answer("owner.ask", map[string]any{"userUtterance": "ada@example.com"}),
		magentest.Answer("owner.extract", extracted(map[string]any{"email": "ada@example.com"})),
	}
	ownerDone := magen.InputState{Values: vals("email", `"ada@example.com"`), Rounds: 1}
	magentest.RunScenarios(t, appGraph(), []magentest.Scenario[appState]{{
		// false, 0 and "" are values, not absences.
		Name:  "everything in the first request, falsy values included",
		Start: appState{Request: "Notes app, com.example.notes, online only, any SDK"},
		Turns: append([]magentest.Turn{magentest.Answer("project.extract", extracted(full))}, owner...),
		Want: appState{Request: "Notes app, com.example.notes, online only, any SDK",
			Project: magen.InputState{Values: vals("name", `"Notes"`, "package", `"com.example.notes"`, "offline", "false", "minSdk", "0")},
			Owner:   ownerDone, Summary: "Notes"},
		Calls: 4, Golden: "inputs/first-request",
	}, {
		Name:  "missing properties asked for twice, invalid value dropped and reported",
		Start: appState{Request: "An app called Notes"},
		Turns: append([]magentest.Turn{
			magentest.Answer("project.extract", extracted(map[string]any{"name": "Notes", "package": nil, "offline": nil, "minSdk": nil})),
			magentest.Reply("project.ask", func(p magentest.Prompt) (any, error) {
				if !strings.Contains(p.Task.Instructions, "package name") || strings.Contains(p.Task.Instructions, "**project name**") {
					t.Errorf("first question does not ask for exactly the missing properties:\n%s", p.Task.Instructions)
				}
				return map[string]any{"userUtterance": "package Com.Example, works offline"}, nil
			}),
			magentest.Answer("project.extract", extracted(map[string]any{"package": "Com.Example", "offline": true})),
			magentest.Reply("project.ask", func(p magentest.Prompt) (any, error) {
				if !strings.Contains(p.Task.Instructions, `"Com.Example" was not accepted`) {
					t.Errorf("second question does not report the rejected value:\n%s", p.Task.Instructions)
				}
				return map[string]any{"userUtterance": "com.example.notes, SDK 21"}, nil
			}),
			magentest.Answer("project.extract", extracted(map[string]any{"package": "com.example.notes", "minSdk": 21})),
		}, owner...),
		Want: appState{Request: "An app called Notes",
			Project: magen.InputState{Values: vals("name", `"Notes"`, "package", `"com.example.notes"`, "offline", "true", "minSdk", "21"), Rounds: 2},
			Owner:   ownerDone, Summary: "Notes"},
		Calls: 8, Golden: "inputs/asked-twice",
	}, {
		Name:  "the user never answers: the loop is bounded",
		Start: appState{Request: "hi"},
		Turns: []magentest.Turn{
			magentest.Answer("project.extract", extracted(map[string]any{})),
			magentest.Answer("project.ask", map[string]any{"userUtterance": "hmm"}),
			magentest.Answer("project.extract", extracted(map[string]any{})),
			magentest.Answer("project.ask", map[string]any{"userUtterance": "no"}),
			magentest.Answer("project.extract", extracted(map[string]any{})),
			magentest.Answer("project.ask", map[string]any{"userUtterance": "still no"}),
			magentest.Answer("project.extract", extracted(map[string]any{})),
		},
		// The failure keeps the state before the failing node.
		Want:   appState{Request: "hi", Project: magen.InputState{Utterance: "still no", Rounds: 3}},
		Status: magen.StatusFailed,
	}}, magen.WithToolID("apps"))
}

func TestInputsBoundAndPresent(t *testing.T) {
	bounded := appGraph(func(in *magen.Inputs[appState]) { in.MaxRounds = 1 })
	h := magentest.New(t, bounded())
	out := h.Play(t, appState{Request: "hi"},
		magentest.Answer("project.extract", extracted(map[string]any{})),
		magentest.Answer("project.ask", map[string]any{"userUtterance": "no"}),
		magentest.Answer("project.extract", extracted(map[string]any{})))
	if out.Status != magen.StatusFailed || !strings.Contains(out.Last.Error, "still missing project name, package name, offline support, minimum SDK after 1 questions") {
		t.Errorf("outcome = %s %q, want a failure naming the missing properties", out.Status, out.Last.Error)
	}

	// A custom predicate: an empty name does not count.
	strict := appGraph(func(in *magen.Inputs[appState]) {
		in.Present = func(p magen.Property, v json.RawMessage) bool { return string(v) != `""` }
	})
	h = magentest.New(t, strict())
	out = h.Play(t, appState{Request: "x"},
		magentest.Answer("project.extract", extracted(map[string]any{"name": "", "package": "a.b", "offline": true, "minSdk": 1})),
		magentest.Reply("project.ask", func(p magentest.Prompt) (any, error) {
			if !strings.Contains(p.Task.Instructions, "project name") || strings.Contains(p.Task.Instructions, "package name") {
				t.Errorf("asks for the wrong properties:\n%s", p.Task.Instructions)
			}
			return map[string]any{"userUtterance": "Notes"}, nil
		}),
		magentest.Answer("project.extract", extracted(map[string]any{"name": "Notes"})),
		magentest.Answer("owner.ask", map[string]any{"userUtterance": "a@b.c"}),
		magentest.Answer("owner.extract", extracted(map[string]any{"email": "a@b.c"})))
	if out.Status != magen.StatusCompleted || out.State.Summary != "Notes" {
		t.Errorf("outcome = %s %+v", out.Status, out.State)
	}
}

func TestInputsIncompleteRoute(t *testing.T) {
	type st struct {
		In     magen.InputState `json:"in"`
		GaveUp bool             `json:"gaveUp"`
	}
	in := magen.Inputs[st]{Name: "in", Properties: []magen.Property{magen.PropertyOf[string]("x", "x", "an x")},
		State: func(s *st) *magen.InputState { return &s.In }, MaxRounds: 1, Next: magen.End, Incomplete: "give up"}
	g := magen.NewGraph[st]().
		AddNode("give up", func(ctx context.Context, s st) (st, error) { s.GaveUp = true; return s, nil }).
		AddEdge(magen.Start, in.Entry()).AddEdge("give up", magen.End)
	in.AddTo(g)
	h := magentest.New(t, g)
	out := h.Play(t, nil,
		magentest.Answer("in.ask", map[string]any{"userUtterance": "no"}),
		magentest.Answer("in.extract", extracted(map[string]any{"x": nil})))
	if out.Status != magen.StatusCompleted || !out.State.GaveUp {
		t.Errorf("outcome = %s %+v, want the Incomplete node to run", out.Status, out.State)
	}
}

func TestInputsValidation(t *testing.T) {
	g := magen.NewGraph[appState]().AddEdge(magen.Start, "a.extract")
	magen.Inputs[appState]{Name: "a", State: func(s *appState) *magen.InputState { return &s.Project }, Next: magen.End,
		Properties: []magen.Property{{Name: "bad", Schema: json.RawMessage(`{"type":"string","prefixItems":[]}`)}}}.AddTo(g)
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), `property "bad"`) {
		t.Errorf("Validate = %v, want the bad property schema reported", err)
	}
}
