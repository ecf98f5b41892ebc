package magen_test

import (
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

// TestDocScenarios specifies the review workflow, through the real MCP tool.
func TestDocScenarios(t *testing.T) {
	graph := func() *magen.Graph[docState] { return docGraph(&counters{}) }
	magentest.RunScenarios(t, graph, []magentest.Scenario[docState]{{
		Name:  "approved at once",
		Start: docState{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Answer("draft", draftResult{Text: "Go is fun."}),
			magentest.Answer("review", reviewResult{Approved: true}),
		},
		Want:  docState{Topic: "Go", Draft: "Go is fun.", Approved: true, Published: "GO IS FUN."},
		Calls: 3, Golden: "scenarios/approved",
	}, {
		Name:  "revised after feedback",
		Start: docState{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Answer("draft", draftResult{Text: "Go."}),
			magentest.Answer("review", reviewResult{Feedback: "longer"}),
			magentest.Reply("draft", func(p magentest.Prompt) (any, error) {
				return draftResult{Text: "Go, " + p.Task.Instructions[len(p.Task.Instructions)-6:]}, nil
			}),
			magentest.Answer("review", reviewResult{Approved: true}),
		},
		Want:  docState{Topic: "Go", Draft: "Go, longer", Approved: true, Revisions: 1, Published: "GO, LONGER"},
		Calls: 5,
	}, {
		Name:  "invalid answer repaired",
		Start: docState{Topic: "Go"},
		Turns: []magentest.Turn{
			magentest.Invalid("draft", map[string]any{"text": 42, "extra": true}),
			magentest.Answer("draft", draftResult{Text: "Go."}),
			magentest.Answer("review", reviewResult{Approved: true}),
		},
		Want:  docState{Topic: "Go", Draft: "Go.", Approved: true, Published: "GO."},
		Calls: 4, Golden: "scenarios/repaired",
	}})
}
