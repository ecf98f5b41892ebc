package magen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Template composes task text from the parts a good task has, in this
// order: role, task, context, instructions, output. Empty parts are left
// out. Use it as Guidance.Task through Text, or with the task shapes
// Select, Approve and Revise.
type Template struct {
	Role         string   // who the LLM acts as, such as "a release manager"
	Task         string   // what to do, in a sentence or two
	Context      []string // facts the LLM needs, one per item
	Instructions []string // rules or steps, numbered in the prompt
	Output       string   // what the result must contain, beyond the schema
}

// Text renders the template as Markdown.
func (t Template) Text() string {
	var b strings.Builder
	if r := strings.TrimSpace(t.Role); r != "" {
		fmt.Fprintf(&b, "You are %s.\n\n", strings.TrimSuffix(r, "."))
	}
	if s := strings.TrimSpace(t.Task); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if len(t.Context) > 0 {
		b.WriteString("## Context\n\n")
		for _, c := range t.Context {
			b.WriteString(strings.TrimSpace(c))
			b.WriteString("\n\n")
		}
	}
	if len(t.Instructions) > 0 {
		b.WriteString("## Instructions\n\n")
		for i, s := range t.Instructions {
			fmt.Fprintf(&b, "%d. %s\n", i+1, strings.TrimSpace(s))
		}
		b.WriteString("\n")
	}
	if s := strings.TrimSpace(t.Output); s != "" {
		fmt.Fprintf(&b, "## Output\n\n%s\n", s)
	}
	return strings.TrimSpace(b.String())
}

// Choice is one option offered by Select.
type Choice struct {
	ID          string // what the LLM answers with
	Label       string // a short name; default ID
	Description string
}

// Selection is the answer to Select.
type Selection struct {
	ID     string `json:"selected" jsonschema:"the id of the chosen option"`
	Reason string `json:"reason" jsonschema:"why this option fits best, in one or two sentences"`
}

// SelectGuidance builds the guidance of Select: the choices are listed
// after the template's context, and the result schema only accepts their
// ids.
func SelectGuidance(t Template, choices []Choice) Guidance {
	var list strings.Builder
	list.WriteString("The options:\n\n")
	ids := make([]string, len(choices))
	for i, c := range choices {
		ids[i] = c.ID
		fmt.Fprintf(&list, "- `%s`", c.ID)
		if c.Label != "" {
			fmt.Fprintf(&list, " (%s)", c.Label)
		}
		if c.Description != "" {
			fmt.Fprintf(&list, ": %s", c.Description)
		}
		list.WriteString("\n")
	}
	t.Context = append(t.Context[:len(t.Context):len(t.Context)], list.String())
	if t.Output == "" {
		t.Output = "The id of exactly one option, and why you chose it."
	}
	enum, _ := json.Marshal(ids)
	schema := `{"type":"object","properties":{"selected":{"type":"string","enum":` + string(enum) +
		`,"description":"the id of the chosen option"},"reason":{"type":"string","description":"why this option fits best, in one or two sentences"}},"required":["selected","reason"],"additionalProperties":false}`
	ex := Selection{Reason: "It matches what the user asked for."}
	if len(ids) > 0 {
		ex.ID = ids[0]
	}
	return Guidance{Task: t.Text(), Schema: json.RawMessage(schema), Example: ex}
}

// Select asks the LLM to choose one of choices. An answer that is not one
// of their ids is rejected by the schema, and the LLM is asked again. The
// choices must have distinct, non-empty ids.
func Select(ctx context.Context, t Template, choices []Choice) (Selection, error) {
	if len(choices) == 0 {
		return Selection{}, fmt.Errorf("magen: Select: no choices")
	}
	seen := make(map[string]bool, len(choices))
	for _, c := range choices {
		if c.ID == "" || seen[c.ID] {
			return Selection{}, fmt.Errorf("magen: Select: choice ids must be distinct and non-empty, got %q twice or empty", c.ID)
		}
		seen[c.ID] = true
	}
	return Ask[Selection](ctx, SelectGuidance(t, choices))
}

// Approval is the answer to Approve.
type Approval struct {
	Approved bool   `json:"approved" jsonschema:"true to go ahead as is, false to ask for changes"`
	Feedback string `json:"feedback,omitempty" jsonschema:"what must change, when not approved"`
}

// ApproveGuidance builds the guidance of Approve.
func ApproveGuidance(t Template, subject string) Guidance {
	t.Context = append(t.Context[:len(t.Context):len(t.Context)], "What to review:\n\n"+fence(subject))
	if len(t.Instructions) == 0 {
		t.Instructions = []string{
			"Show the user what to review and ask whether to go ahead.",
			"Wait for the user's answer; do not decide for them.",
			"If they want changes, put what they asked for in feedback.",
		}
	}
	return Guidance{Task: t.Text(), Example: Approval{Approved: false, Feedback: "Use a shorter title."}}
}

// Approve asks for a review of subject, usually by the user, and returns
// the decision.
func Approve(ctx context.Context, t Template, subject string) (Approval, error) {
	return Ask[Approval](ctx, ApproveGuidance(t, subject))
}

// Revision is the answer to Revise.
type Revision struct {
	Revised string `json:"revised" jsonschema:"the complete revised text"`
	Changes string `json:"changes" jsonschema:"a short list of what changed"`
}

// ReviseGuidance builds the guidance of Revise.
func ReviseGuidance(t Template, original, feedback string) Guidance {
	t.Context = append(t.Context[:len(t.Context):len(t.Context)],
		"The current version:\n\n"+fence(original), "The feedback to address:\n\n"+fence(feedback))
	if t.Output == "" {
		t.Output = "The complete revised text, not a diff, and a short list of what changed."
	}
	return Guidance{Task: t.Text(), Example: Revision{Revised: "…", Changes: "Shortened the title."}}
}

// Revise asks the LLM to revise original to address feedback.
func Revise(ctx context.Context, t Template, original, feedback string) (Revision, error) {
	return Ask[Revision](ctx, ReviseGuidance(t, original, feedback))
}

// fence puts text in a Markdown code fence long enough not to be closed by
// backquotes inside it.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimSpace(s) + "\n" + f
}
