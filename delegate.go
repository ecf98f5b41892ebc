package magen

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// WorkflowTask computes the prompt of a workflow tool: what the LLM must do
// for the task it was delegated. args are the tool's arguments without
// workflowStateData.
type WorkflowTask func(ctx context.Context, args map[string]any) (string, error)

// RegisterWorkflowTool adds tool to s as a tool the orchestrator delegates
// to (see Delegate). Its input schema gains a required workflowStateData
// property. When the LLM calls it, task computes the tool's prompt, and the
// result ends with the result schema of the pending task and the exact call
// that returns the result to the orchestrator (see DelegatedResult).
func (o *Orchestrator[S]) RegisterWorkflowTool(s *server.MCPServer, tool mcp.Tool, task WorkflowTask) error {
	if task == nil {
		return fmt.Errorf("%w: RegisterWorkflowTool(%q): nil task", ErrInvalidOption, tool.Name)
	}
	if err := addStateDataProperty(&tool); err != nil {
		return fmt.Errorf("RegisterWorkflowTool(%q): %w", tool.Name, err)
	}
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.GetArguments()
		if args == nil {
			args = map[string]any{}
		}
		raw, _ := json.Marshal(args[StateDataKey])
		sd, err := ParseStateData(raw)
		if err == nil && sd.ThreadID == "" {
			err = fmt.Errorf("%w: workflowStateData is required: %s is a step of a workflow; call %s to start one", ErrInvalidInput, tool.Name, o.cfg.toolID)
		}
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		rest := make(map[string]any, len(args))
		for k, v := range args {
			if k != StateDataKey {
				rest[k] = v
			}
		}
		prompt, err := task(ctx, rest)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("%s: %v", tool.Name, err)), nil
		}
		res, err := o.delegatedResult(ctx, sd, prompt, tool.Name)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("%s: %v", tool.Name, err)), nil
		}
		return res, nil
	})
	return nil
}

const stateDataProperty = `{"type":"object","description":"Opaque workflow state data: copy it exactly as the orchestrator gave it.","properties":{"thread_id":{"type":"string"},"seq":{"type":"integer"}},"required":["thread_id"]}`

// addStateDataProperty adds a required workflowStateData property to t's
// input schema, copying what it changes so that the caller's tool is left
// as it was.
func addStateDataProperty(t *mcp.Tool) error {
	var prop map[string]any
	_ = json.Unmarshal([]byte(stateDataProperty), &prop)
	if t.RawInputSchema != nil {
		var schema map[string]any
		if err := json.Unmarshal(t.RawInputSchema, &schema); err != nil || schema == nil {
			return fmt.Errorf("raw input schema is not a JSON object")
		}
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props[StateDataKey] = prop
		schema["properties"] = props
		req, _ := schema["required"].([]any)
		if !slices.Contains(req, any(StateDataKey)) {
			schema["required"] = append(req, StateDataKey)
		}
		raw, err := json.Marshal(schema)
		if err != nil {
			return err
		}
		t.RawInputSchema = raw
		return nil
	}
	if t.InputSchema.Type == "" {
		t.InputSchema.Type = "object"
	}
	t.InputSchema.Properties = maps.Clone(t.InputSchema.Properties)
	if t.InputSchema.Properties == nil {
		t.InputSchema.Properties = map[string]any{}
	}
	t.InputSchema.Properties[StateDataKey] = prop
	if !slices.Contains(t.InputSchema.Required, StateDataKey) {
		t.InputSchema.Required = append(slices.Clip(t.InputSchema.Required), StateDataKey)
	}
	return nil
}

// DelegatedResult builds the result of a tool that the LLM was delegated to
// (see Delegate). The result holds toolPrompt, the tool's own instructions,
// followed by how to call the orchestrator back: the result schema of the
// pending task and the exact call with sd. Use ParseStateData to read sd
// from the tool's arguments.
func (o *Orchestrator[S]) DelegatedResult(ctx context.Context, sd StateData, toolPrompt string) (*mcp.CallToolResult, error) {
	return o.delegatedResult(ctx, sd, toolPrompt, "")
}

// delegatedResult is DelegatedResult for the tool named tool ("" for any):
// the thread must be waiting, at sd.Seq if given, for a task delegated to
// that tool.
func (o *Orchestrator[S]) delegatedResult(ctx context.Context, sd StateData, toolPrompt, tool string) (*mcp.CallToolResult, error) {
	cp, err := o.store.Load(ctx, sd.ThreadID)
	if err != nil {
		return nil, err
	}
	switch {
	case cp.Status != StatusAwaiting || len(cp.Pending) == 0:
		return nil, fmt.Errorf("thread %q is %s, not waiting for a delegated task: %w", sd.ThreadID, cp.Status, ErrStaleState)
	case sd.Seq != 0 && sd.Seq != cp.Seq:
		return nil, fmt.Errorf("thread %q is at step %d, not %d: %w; call %s for the current task", sd.ThreadID, cp.Seq, sd.Seq, ErrStaleState, o.cfg.toolID)
	case cp.Pending[0].Kind != KindDelegate || (tool != "" && cp.Pending[0].Tool != tool):
		return nil, fmt.Errorf("thread %q is not waiting for %s: %w; call %s for the current task", sd.ThreadID, cmp.Or(tool, "a delegated tool"), ErrStaleState, o.cfg.toolID)
	}
	p := o.promptContext(cp)
	p.ToolPrompt = toolPrompt
	text := o.cfg.prompts.DelegatedResult(p)
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: map[string]any{
			"promptForLLM":      text,
			"resultSchema":      p.Task.ResultSchema,
			"workflowStateData": p.StateData,
		},
	}, nil
}

// ParseStateData decodes a workflowStateData value. Absent or null gives the
// zero StateData, which starts a new workflow. Delegated tools use it to
// read the workflowStateData they were given.
func ParseStateData(raw json.RawMessage) (StateData, error) {
	var sd StateData
	if len(raw) == 0 || string(raw) == "null" {
		return sd, nil
	}
	if !isJSONObject(raw) {
		return sd, fmt.Errorf("%w: workflowStateData must be an object like {\"thread_id\": \"...\"}, got %s", ErrInvalidInput, jsonKind(raw))
	}
	var wire struct {
		ThreadID any `json:"thread_id"`
		Seq      any `json:"seq"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return sd, fmt.Errorf("%w: workflowStateData: %v", ErrInvalidInput, err)
	}
	switch id := wire.ThreadID.(type) {
	case nil:
	case string:
		sd.ThreadID = id
	default:
		return sd, fmt.Errorf("%w: workflowStateData.thread_id must be a string", ErrInvalidInput)
	}
	switch seq := wire.Seq.(type) {
	case nil:
	case float64:
		if seq < 0 || seq != float64(int64(seq)) {
			return sd, fmt.Errorf("%w: workflowStateData.seq must be a whole number of at least 0", ErrInvalidInput)
		}
		sd.Seq = int64(seq)
	default:
		return sd, fmt.Errorf("%w: workflowStateData.seq must be a number", ErrInvalidInput)
	}
	if sd.ThreadID == "" && sd.Seq != 0 {
		return sd, fmt.Errorf("%w: workflowStateData has a seq but no thread_id", ErrInvalidInput)
	}
	return sd, nil
}
