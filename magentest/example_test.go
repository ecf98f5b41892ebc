package magentest_test

import (
	"context"
	"fmt"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

// A harness runs the real orchestrator and MCP tool; only the LLM is
// scripted. The core works without a *testing.T.
func ExampleHarness_Run() {
	h, err := magentest.NewHarness(reviewGraph())
	if err != nil {
		panic(err)
	}
	defer h.Close()

	llm := magentest.NewLLM(
		magentest.Answer("draft", Draft{Text: "Go is fun."}),
		magentest.Answer("review", Review{Approved: false}),
		magentest.Answer("draft", Draft{Text: "Go is fun and fast."}),
		magentest.Answer("review", Review{Approved: true}),
	)
	out, err := h.Run(context.Background(), Doc{Topic: "Go"}, llm)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.Calls)
	fmt.Printf("%+v\n", out.State)
	for _, p := range out.Prompts {
		fmt.Println(magentest.GoldenName(p))
	}
	// Output:
	// completed 5
	// {Topic:Go Text:Go is fun and fast. Approved:true Rounds:2}
	// 01-draft.md
	// 02-review.md
	// 03-draft.md
	// 04-review.md
	// 05-completed.md
}

// The fake LLM reports a turn that expects another node, with the file and
// line of the row that scripted it, and the turns that were never used.
func ExampleLLM_Err() {
	h, _ := magentest.NewHarness(reviewGraph())
	defer h.Close()
	llm := magentest.NewLLM(
		magentest.Answer("review", Review{Approved: true}),
		magentest.Answer("draft", Draft{Text: "unused"}),
	)
	_, err := h.Run(context.Background(), Doc{Topic: "Go"}, llm)
	fmt.Println(err)
	// Output:
	// example_test.go:51: turn 1 expects a task from node "review", got one from node "draft" at call 1
	// 1 scripted turn(s) left over, the first at example_test.go:52 (expecting node "draft")
}

// Lint flags guidance an LLM would struggle with.
func ExampleLint() {
	err := magentest.Lint(magen.Task{
		NodeID:       "classify",
		Kind:         magen.KindGuidance,
		Instructions: "Classify the ticket.",
		Example:      []byte(`{"category":"bug","urgent":"yes"}`),
		ResultSchema: []byte(`{"type":"object","properties":{"category":{"type":"string"},"urgent":{"type":"boolean","description":"blocks work"}}}`),
	})
	fmt.Println(err)
	// Output:
	// node "classify" task 0: example does not match the schema: urgent: Invalid type. Expected: boolean, given: string
	// node "classify" task 0: property "category" has no description
}
