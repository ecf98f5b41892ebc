package magen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// PromptBuilder writes the text the LLM reads. Every method receives a
// PromptContext filled for its case. To replace some prompts and keep the
// others, embed DefaultPrompts in your type and define only those methods.
//
// Builders are called concurrently from many turns and must be safe for
// concurrent use.
type PromptBuilder interface {
	// Guidance asks the LLM to do a task itself (KindGuidance).
	Guidance(p PromptContext) string
	// Delegate asks the LLM to call another tool (KindDelegate).
	Delegate(p PromptContext) string
	// DelegatedResult is the text a delegated tool returns: its own prompt
	// (p.ToolPrompt) followed by how to call the orchestrator back.
	DelegatedResult(p PromptContext) string
	// Completed says the workflow finished.
	Completed(p PromptContext) string
	// Failed says the workflow failed, with p.Error.
	Failed(p PromptContext) string
	// InvalidResult names each problem in p.Problems and asks for the same
	// task again with the exact call to make.
	InvalidResult(p PromptContext) string
}

// PromptContext is what a prompt is built from.
type PromptContext struct {
	ToolID string // the orchestrator's MCP tool name
	Title  string // the orchestrator's title
	// StateData is the workflowStateData the LLM must send back verbatim.
	StateData StateData
	// Task is the pending task, for Guidance, Delegate, DelegatedResult and
	// InvalidResult.
	Task *Task
	// Problems lists why the last result was rejected, for InvalidResult.
	Problems []FieldError
	// Error is the failure text, for Failed.
	Error string
	// State is the thread's state as JSON, for Completed and Failed.
	State json.RawMessage
	// ToolPrompt is the delegated tool's own prompt, for DelegatedResult.
	ToolPrompt string
}

// StateDataJSON returns workflowStateData as compact JSON, exactly as the LLM
// must send it back.
func (p PromptContext) StateDataJSON() string {
	b, _ := json.Marshal(p.StateData)
	return string(b)
}

// DefaultPrompts are the prompts magen writes unless WithPromptBuilder
// replaces them. The golden files in testdata/prompts show each one.
type DefaultPrompts struct{}

var _ PromptBuilder = DefaultPrompts{}

// Guidance implements PromptBuilder. It gives the role, the task, the exact
// call that returns the result, an example if there is one, and the result
// schema last, where the LLM attends to it best.
func (DefaultPrompts) Guidance(p PromptContext) string {
	var b strings.Builder
	writeRole(&b, p)
	fmt.Fprintf(&b, "# Task\n\n%s\n\n", strings.TrimSpace(p.Task.Instructions))
	writeReturn(&b, p, "When the task is done, call")
	writeExampleAndSchema(&b, p.Task)
	return b.String()
}

// Delegate implements PromptBuilder.
func (DefaultPrompts) Delegate(p PromptContext) string {
	var b strings.Builder
	writeRole(&b, p)
	b.WriteString("# Task\n\n")
	if note := strings.TrimSpace(p.Task.Instructions); note != "" {
		b.WriteString(note)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Call the `%s` tool with exactly these arguments:\n\n```json\n%s\n```\n\n", p.Task.Tool, delegateInput(p))
	fmt.Fprintf(&b, "That tool tells you what to do. Follow its instructions; they end by telling you to call `%s` again with your result and the same `workflowStateData`. If they do not, call it with `{\"userInput\": <your result>, \"workflowStateData\": %s}`.\n", p.ToolID, p.StateDataJSON())
	return b.String()
}

// DelegatedResult implements PromptBuilder.
func (DefaultPrompts) DelegatedResult(p PromptContext) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.ToolPrompt))
	b.WriteString("\n\n# Return your result\n\n")
	writeCall(&b, p, "When the task is done, call")
	writeExampleAndSchema(&b, p.Task)
	return b.String()
}

// Completed implements PromptBuilder.
func (DefaultPrompts) Completed(p PromptContext) string {
	return fmt.Sprintf("# Workflow complete\n\nThe workflow%s has finished successfully. There is nothing more to do for it: do not call `%s` again for this workflow. Tell the user that it is complete.\n", quoteTitle(p), p.ToolID)
}

// Failed implements PromptBuilder.
func (DefaultPrompts) Failed(p PromptContext) string {
	return fmt.Sprintf("# Workflow failed\n\nThe workflow%s stopped with an error:\n\n%s\n\nDo not call `%s` again for this workflow; it cannot continue. Tell the user what failed. To try again, start a new workflow by calling `%s` without `workflowStateData`.\n", quoteTitle(p), fence(p.Error), p.ToolID, p.ToolID)
}

// InvalidResult implements PromptBuilder.
func (DefaultPrompts) InvalidResult(p PromptContext) string {
	var b strings.Builder
	b.WriteString("# Your result was not accepted\n\n")
	b.WriteString("The workflow did not advance: nothing was lost. Your result does not match the output schema:\n\n")
	for _, e := range p.Problems {
		fmt.Fprintf(&b, "- `%s`: %s\n", e.Field, e.Problem)
	}
	b.WriteString("\nFix each problem, then send the corrected result for the same task.\n\n")
	if t := p.Task; t != nil && t.Kind == KindGuidance {
		fmt.Fprintf(&b, "# The task\n\n%s\n\n", strings.TrimSpace(t.Instructions))
	}
	writeReturn(&b, p, "Call")
	writeExampleAndSchema(&b, p.Task)
	return b.String()
}

func writeRole(b *strings.Builder, p PromptContext) {
	fmt.Fprintf(b, "# Role\n\nYou are carrying out one step of a workflow%s that the `%s` tool runs. Do this step as described, then call `%s` back as shown below so that the workflow can continue.\n\n", quoteTitle(p), p.ToolID, p.ToolID)
}

func writeReturn(b *strings.Builder, p PromptContext, lead string) {
	b.WriteString("# Return your result\n\n")
	writeCall(b, p, lead)
}

func writeCall(b *strings.Builder, p PromptContext, lead string) {
	fmt.Fprintf(b, "%s the `%s` tool with exactly these arguments:\n\n", lead, p.ToolID)
	fmt.Fprintf(b, "```json\n{\"userInput\": <your result>, \"workflowStateData\": %s}\n```\n\n", p.StateDataJSON())
	b.WriteString("- `userInput`: your result, a JSON object that matches the output schema below.\n")
	b.WriteString("- `workflowStateData`: copy it exactly as shown. Do not change it or leave it out.\n\n")
}

func writeExampleAndSchema(b *strings.Builder, t *Task) {
	if t == nil {
		return
	}
	if len(t.Example) > 0 {
		fmt.Fprintf(b, "# Example result\n\n```json\n%s\n```\n\n", indentJSON(t.Example))
	}
	fmt.Fprintf(b, "# Output schema\n\n```json\n%s\n```\n", indentJSON(t.ResultSchema))
}

// delegateInput is the delegated tool's input with workflowStateData added.
func delegateInput(p PromptContext) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p.Task.ToolInput, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	m["workflowStateData"] = json.RawMessage(p.StateDataJSON())
	b, _ := marshalText(m)
	return indentJSON(b)
}

// quoteTitle names the workflow in prompts: " (Title)", or nothing when it
// has no title of its own.
func quoteTitle(p PromptContext) string {
	if p.Title == "" || p.Title == DefaultTitle {
		return ""
	}
	return " (" + p.Title + ")"
}

func indentJSON(raw json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	return out.String()
}
