package magen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The property names of the default input schema.
const (
	UserInputKey = "userInput"
	StateDataKey = "workflowStateData"
)

const defaultInputSchema = `{
  "type": "object",
  "properties": {
    "userInput": {
      "type": "object",
      "description": "Your result for the current task, as a JSON object matching the task's output schema. On the first call: the workflow's initial input, if any.",
      "additionalProperties": true
    },
    "workflowStateData": {
      "type": "object",
      "description": "Opaque workflow state data. Omit it to start a new workflow; afterwards copy it exactly from the last result.",
      "properties": {
        "thread_id": {"type": "string"},
        "seq": {"type": "integer", "minimum": 0}
      },
      "required": ["thread_id"]
    }
  }
}`

const outputSchema = `{
  "type": "object",
  "properties": {
    "orchestrationInstructionsPrompt": {"type": "string", "description": "What to do next."},
    "status": {"type": "string", "enum": ["awaiting_result", "completed", "failed"]},
    "workflowStateData": {
      "type": "object",
      "properties": {"thread_id": {"type": "string"}, "seq": {"type": "integer"}},
      "required": ["thread_id"]
    },
    "task": {
      "type": "object",
      "description": "The pending task, when status is awaiting_result.",
      "properties": {
        "nodeId": {"type": "string"},
        "index": {"type": "integer"},
        "kind": {"type": "string", "enum": ["guidance", "delegate"]},
        "instructions": {"type": "string"},
        "tool": {"type": "string"},
        "toolInput": {"type": "object"},
        "example": {},
        "resultSchema": {"type": "object"}
      },
      "required": ["nodeId", "index", "kind", "resultSchema"]
    },
    "error": {"type": "string"}
  },
  "required": ["orchestrationInstructionsPrompt", "status", "workflowStateData"]
}`

// Tool returns the orchestrator's MCP tool definition: its name, title,
// description, input and output schemas, and annotations.
func (o *Orchestrator[S]) Tool() mcp.Tool {
	in := json.RawMessage(defaultInputSchema)
	if o.cfg.inputSchema != nil {
		in = o.cfg.inputSchema
	}
	t := mcp.NewTool(o.cfg.toolID,
		mcp.WithToolTitle(o.cfg.title),
		mcp.WithDescription(o.cfg.description),
		mcp.WithRawInputSchema(in),
		mcp.WithRawOutputSchema(json.RawMessage(outputSchema)),
		mcp.WithTitleAnnotation(o.cfg.title),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	)
	// NewTool pre-fills the structured schemas, which would conflict with
	// the raw ones and make tools/list fail.
	t.InputSchema = mcp.ToolInputSchema{}
	t.OutputSchema = mcp.ToolOutputSchema{}
	return t
}

// Register adds the orchestrator's tool to s.
func (o *Orchestrator[S]) Register(s *server.MCPServer) {
	s.AddTool(o.Tool(), o.Handle)
}

// Handle is the MCP tool handler. Every success carries structured content
// (a Result); every failure is a tool error (isError) with text only, so
// that the LLM reads what went wrong and the server keeps serving. It never
// returns a Go error.
func (o *Orchestrator[S]) Handle(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
	defer func() {
		if r := recover(); r != nil {
			o.log.ErrorContext(ctx, "panic in tool handler", "panic", r)
			res = mcp.NewToolResultError(fmt.Sprintf("internal error in %s; nothing was saved. The server log has the details.", o.cfg.toolID))
		}
	}()
	args, err := rawArguments(req)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	var token any
	if m := req.Params.Meta; m != nil {
		token = m.ProgressToken
	}
	ctx = withProgress(ctx, server.ServerFromContext(ctx), token, o.log)
	r, err := o.Call(ctx, args)
	if err != nil {
		return o.errorResult(ctx, err), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(r.Prompt)},
		StructuredContent: r,
	}, nil
}

func (o *Orchestrator[S]) errorResult(ctx context.Context, err error) *mcp.CallToolResult {
	var ir *InvalidResultError
	if errors.As(err, &ir) {
		o.log.InfoContext(ctx, "result rejected", "thread", ir.ThreadID, "node", ir.Task.NodeID, "problems", len(ir.Problems))
		return mcp.NewToolResultError(ir.Prompt)
	}
	o.log.InfoContext(ctx, "call rejected", "error", err)
	return mcp.NewToolResultError(fmt.Sprintf("%s: %v", o.cfg.toolID, err))
}

func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	switch a := req.GetRawArguments().(type) {
	case json.RawMessage:
		return a, nil
	case nil:
		return nil, nil
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("%w: arguments are not JSON: %v", ErrInvalidInput, err)
		}
		return b, nil
	}
}

// Call parses raw tool arguments, as the MCP handler receives them, and runs
// one turn. It applies the size limit and the extractors, then calls Run.
func (o *Orchestrator[S]) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	if len(args) > o.cfg.maxInputBytes {
		return nil, fmt.Errorf("%w: the arguments are %d bytes; the limit is %d", ErrInputTooLarge, len(args), o.cfg.maxInputBytes)
	}
	fields := map[string]json.RawMessage{}
	if len(args) > 0 && string(args) != "null" {
		if !isJSONObject(args) {
			return nil, fmt.Errorf("%w: the arguments must be a JSON object", ErrInvalidInput)
		}
		if err := json.Unmarshal(args, &fields); err != nil {
			return nil, fmt.Errorf("%w: the arguments are not valid JSON: %v", ErrInvalidInput, err)
		}
	}
	var in Input
	var err error
	if in.UserInput, err = o.cfg.userInput(fields); err != nil {
		return nil, err
	}
	if in.StateData, err = o.cfg.stateData(fields); err != nil {
		return nil, err
	}
	return o.Run(ctx, in)
}

func defaultUserInput(args map[string]json.RawMessage) (json.RawMessage, error) {
	v := args[UserInputKey]
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if !isJSONObject(v) {
		return nil, fmt.Errorf("%w: userInput must be a JSON object, got %s", ErrInvalidInput, jsonKind(v))
	}
	return v, nil
}

func defaultStateData(args map[string]json.RawMessage) (StateData, error) {
	return ParseStateData(args[StateDataKey])
}

func jsonKind(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "an object"
		case '[':
			return "an array"
		case '"':
			return "a string"
		case 't', 'f':
			return "a boolean"
		case 'n':
			return "null"
		default:
			return "a number"
		}
	}
	return "nothing"
}

func initialStateType(f any) string {
	t := reflect.TypeOf(f)
	if t.Kind() == reflect.Func && t.NumOut() > 0 {
		return t.Out(0).String()
	}
	return t.String()
}
