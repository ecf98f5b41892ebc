package magen_test

import (
	"encoding/json"
	"testing"

	"github.com/magen-go/magen"
)

func TestDefaultPromptsGolden(t *testing.T) {
	schema, err := magen.SchemaFor[reviewResult]()
	if err != nil {
		t.Fatal(err)
	}
	sd := magen.StateData{ThreadID: "Q2VWM4ZKXH7TNC3JFBP6RDSAGE", Seq: 3}
	guidance := &magen.Task{NodeID: "review", Kind: magen.KindGuidance, Instructions: "Review this draft:\n\nGo is a language.",
		Example: json.RawMessage(`{"approved":false,"feedback":"Say what makes it different."}`), ResultSchema: schema}
	plain := &magen.Task{NodeID: "review", Kind: magen.KindGuidance, Instructions: "Review the draft.", ResultSchema: schema}
	delegate := &magen.Task{NodeID: "build", Kind: magen.KindDelegate, Instructions: "The build failed; the recovery tool knows how to fix it.",
		Tool: "build-recovery", ToolInput: json.RawMessage(`{"log":"error: missing semicolon","attempt":2}`), ResultSchema: schema}
	base := magen.PromptContext{ToolID: "docs-workflow", Title: "Docs", StateData: sd}
	with := func(f func(p *magen.PromptContext)) magen.PromptContext {
		p := base
		f(&p)
		return p
	}
	var b magen.DefaultPrompts
	for name, got := range map[string]string{
		"guidance":           b.Guidance(with(func(p *magen.PromptContext) { p.Task = guidance })),
		"guidance_noexample": b.Guidance(with(func(p *magen.PromptContext) { p.Task = plain })),
		"delegate":           b.Delegate(with(func(p *magen.PromptContext) { p.Task = delegate })),
		"delegated_result": b.DelegatedResult(with(func(p *magen.PromptContext) {
			p.Task = delegate
			p.ToolPrompt = "# Recover the build\n\nRead the build log, fix the code, and report what you changed."
		})),
		"completed": b.Completed(base),
		"failed":    b.Failed(with(func(p *magen.PromptContext) { p.Error = `node "build": exit status 2` })),
		"invalid_result": b.InvalidResult(with(func(p *magen.PromptContext) {
			p.Task = guidance
			p.Problems = []magen.FieldError{
				{Field: "approved", Problem: "Invalid type. Expected: boolean, given: string"},
				{Field: "(root)", Problem: "Additional property notes is not allowed"},
			}
		})),
	} {
		t.Run(name, func(t *testing.T) { golden(t, "prompts/"+name+".md", got) })
	}
}
