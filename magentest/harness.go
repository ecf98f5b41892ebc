package magentest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Harness serves a graph through the real orchestrator and MCP tool, on an
// in-process MCP server, for a fake LLM to drive. Its checkpoints are in
// memory unless the options say otherwise.
type Harness[S any] struct {
	Orchestrator *magen.Orchestrator[S]
	Server       *server.MCPServer
	Client       *client.Client

	// Lint checks every task the harness sees with Lint. Default: true.
	Lint bool
	// MaxCalls bounds the tool calls of one run, against endless
	// workflows. Default: 1000.
	MaxCalls int

	toolID string
}

// NewHarness builds an orchestrator for g with opts, registers it on a new
// MCP server, and connects an in-process client. Close it when done.
//
// So that prompts are reproducible, the harness starts from options that
// opts may override: an in-memory checkpointer, a logger that discards,
// thread ids "thread-1", "thread-2", ..., and a clock fixed at
// 2026-01-01T00:00:00Z.
func NewHarness[S any](g *magen.Graph[S], opts ...magen.Option) (*Harness[S], error) {
	var ids atomic.Int64
	base := []magen.Option{
		magen.WithCheckpointer(magen.NewMemoryCheckpointer()),
		magen.WithLogger(slog.New(slog.DiscardHandler)),
		magen.WithIDSource(func() string { return fmt.Sprintf("thread-%d", ids.Add(1)) }),
		magen.WithClock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }),
	}
	o, err := magen.New(g, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	s := server.NewMCPServer("magentest", "1.0.0", server.WithToolCapabilities(false))
	o.Register(s)
	c, err := Connect(context.Background(), s)
	if err != nil {
		return nil, err
	}
	return &Harness[S]{Orchestrator: o, Server: s, Client: c, Lint: true, MaxCalls: 1000, toolID: o.Tool().Name}, nil
}

// Connect returns an initialized in-process MCP client of s. Close it when
// done.
func Connect(ctx context.Context, s *server.MCPServer) (*client.Client, error) {
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "magentest", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the client.
func (h *Harness[S]) Close() error { return h.Client.Close() }

// Outcome is how a run ended. Calls counts every tool call the LLM made,
// including calls to delegated tools.
type Outcome[S any] struct {
	ThreadID string
	Status   magen.Status
	State    S // the thread's state at the end (see Orchestrator.State)
	Calls    int
	Prompts  []Prompt // every result the LLM read, in order
	Last     magen.Result
}

// Call makes one tool call with raw arguments and returns what the LLM
// reads. A tool error is a Prompt with IsError set, not an error; the error
// is for transport failures and malformed results.
func (h *Harness[S]) Call(ctx context.Context, args any) (Prompt, *magen.Result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = h.toolID
	req.Params.Arguments = args
	res, err := h.Client.CallTool(ctx, req)
	if err != nil {
		return Prompt{}, nil, err
	}
	return ParseResult(res)
}

// ParseResult reads an orchestrator tool result as the LLM and a program
// would: a tool error is a Prompt with IsError set; a success must carry a
// magen.Result as structured content whose prompt equals the text content.
// The error reports a result that breaks that contract.
func ParseResult(res *mcp.CallToolResult) (Prompt, *magen.Result, error) {
	text := textOf(res)
	if res.IsError {
		if res.StructuredContent != nil {
			return Prompt{}, nil, fmt.Errorf("tool error with structured content: strict clients reject it")
		}
		return Prompt{Text: text, IsError: true}, nil, nil
	}
	raw := []byte(res.RawStructuredContent)
	if raw == nil {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return Prompt{}, nil, err
		}
	}
	var r magen.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return Prompt{}, nil, fmt.Errorf("structured content %s: %w", raw, err)
	}
	if r.Prompt == "" || r.Prompt != text {
		return Prompt{}, nil, fmt.Errorf("text content %q differs from orchestrationInstructionsPrompt %q", text, r.Prompt)
	}
	return Prompt{Status: r.Status, Task: r.Task, Text: text}, &r, nil
}

// Run starts a workflow with start as its userInput (nil for none) and lets
// llm answer every task until the workflow completes or fails. It returns
// the outcome and every problem met on the way, joined: unexpected tool
// errors, rejected answers, answers that were expected to be rejected and
// were not, lint findings, and llm.Err.
func (h *Harness[S]) Run(ctx context.Context, start any, llm *LLM) (*Outcome[S], error) {
	var errs []error
	out := &Outcome[S]{}
	args := map[string]any{}
	if start != nil {
		args[magen.UserInputKey] = start
	}
	var pending *Prompt // the prompt whose task is being answered
	var turn Turn
	for {
		if out.Calls >= h.MaxCalls {
			errs = append(errs, fmt.Errorf("the workflow did not end within %d tool calls", h.MaxCalls))
			break
		}
		out.Calls++
		p, r, err := h.Call(ctx, args)
		if err != nil {
			errs = append(errs, fmt.Errorf("call %d: %w", out.Calls, err))
			break
		}
		p.Call = out.Calls
		if p.IsError {
			if pending == nil || !turn.invalid {
				llm.Observe(p)
				errs = append(errs, fmt.Errorf("%s: call %d was rejected: %s", turn.where, out.Calls, p.Text))
				break
			}
			p.Task = pending.Task // the same task is asked again
		} else if turn.invalid {
			errs = append(errs, fmt.Errorf("%s: the answer to node %q was accepted, but the turn expects it to be rejected", turn.where, turn.node))
		}
		if r != nil {
			out.Last = *r
			out.ThreadID = r.StateData.ThreadID
			out.Status = r.Status
			args = map[string]any{magen.StateDataKey: r.StateData}
		}
		if !p.IsError && p.Status != magen.StatusAwaiting {
			llm.Observe(p)
			break
		}
		if h.Lint && !p.IsError && p.Task != nil {
			if err := Lint(*p.Task); err != nil {
				errs = append(errs, fmt.Errorf("call %d: lint: %w", out.Calls, err))
			}
		}
		if !p.IsError && p.Task.Kind == magen.KindDelegate {
			// The LLM calls the tool it was delegated to, and answers
			// the prompt that tool returns.
			llm.Observe(p)
			out.Calls++
			tp, err := h.callDelegate(ctx, p.Task, r.StateData)
			if err != nil {
				errs = append(errs, fmt.Errorf("call %d: delegated tool %q: %w", out.Calls, p.Task.Tool, err))
				break
			}
			tp.Call = out.Calls
			p = tp
		}
		answer, t, err := llm.Respond(p)
		if err != nil {
			break // kept by llm.Err
		}
		pending, turn = &p, t
		args[magen.UserInputKey] = answer
	}
	out.Prompts = llm.Prompts()
	if out.ThreadID != "" {
		s, status, err := h.Orchestrator.State(ctx, out.ThreadID)
		if err != nil {
			errs = append(errs, err)
		}
		out.State, out.Status = s, status
	}
	if err := llm.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// callDelegate calls the tool a delegate task names, with the task's input
// and the workflowStateData, as the prompt tells the LLM to.
func (h *Harness[S]) callDelegate(ctx context.Context, task *magen.Task, sd magen.StateData) (Prompt, error) {
	args := map[string]any{}
	if err := json.Unmarshal(task.ToolInput, &args); err != nil {
		return Prompt{}, err
	}
	args[magen.StateDataKey] = sd
	req := mcp.CallToolRequest{}
	req.Params.Name = task.Tool
	req.Params.Arguments = args
	res, err := h.Client.CallTool(ctx, req)
	if err != nil {
		return Prompt{}, err
	}
	if res.IsError {
		return Prompt{}, fmt.Errorf("tool error: %s", textOf(res))
	}
	return Prompt{Status: magen.StatusAwaiting, Task: task, Text: textOf(res), Tool: task.Tool}, nil
}

func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
