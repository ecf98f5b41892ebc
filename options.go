package magen

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"time"
)

// An Option configures an Orchestrator. Options are applied in order, so the
// last one of a kind wins. A bad value never panics: New reports it, joined
// with every other problem.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// Extractors pull the two semantic values out of the tool's arguments. They
// receive the arguments' top-level fields. See WithInputSchema.
type (
	// UserInputExtractor returns the userInput value, or nil if absent.
	UserInputExtractor func(args map[string]json.RawMessage) (json.RawMessage, error)
	// StateDataExtractor returns the workflowStateData value, or the zero
	// StateData if absent.
	StateDataExtractor func(args map[string]json.RawMessage) (StateData, error)
)

type config struct {
	toolID        string
	title         string
	description   string
	inputSchema   json.RawMessage
	userInput     UserInputExtractor
	stateData     StateDataExtractor
	prompts       PromptBuilder
	checkpointer  Checkpointer
	dir           string
	sqliteOpts    []SQLiteOption
	logger        *slog.Logger
	stepLimit     int
	maxInputBytes int
	clock         func() time.Time
	newID         func() string
	initialState  any // func(context.Context, json.RawMessage) (S, error)
	errs          []error
}

// Defaults.
const (
	DefaultToolID        = "workflow-orchestrator"
	DefaultTitle         = "Workflow orchestrator"
	DefaultStepLimit     = 1000
	DefaultMaxInputBytes = 1 << 20
)

func defaultConfig() config {
	return config{
		toolID:        DefaultToolID,
		title:         DefaultTitle,
		description:   "Runs a multi-step workflow. Call it to start the workflow, and call it again exactly as each result instructs.",
		userInput:     defaultUserInput,
		stateData:     defaultStateData,
		prompts:       DefaultPrompts{},
		stepLimit:     DefaultStepLimit,
		maxInputBytes: DefaultMaxInputBytes,
		clock:         time.Now,
		newID:         rand.Text,
	}
}

func (c *config) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
}

// toolName is what MCP clients accept as a tool name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// WithToolID sets the MCP tool name of the orchestrator. It must be 1 to 64
// letters, digits, '_', '-' or '.'. Default: "workflow-orchestrator".
func WithToolID(id string) Option {
	return optionFunc(func(c *config) {
		if !toolName.MatchString(id) {
			c.bad("WithToolID(%q): want 1 to 64 letters, digits, '_', '-' or '.'", id)
			return
		}
		c.toolID = id
	})
}

// WithTitle sets the tool's human-readable title, shown by MCP clients and
// used in prompts (which leave the default title out). Default:
// "Workflow orchestrator".
func WithTitle(title string) Option {
	return optionFunc(func(c *config) { c.title = title })
}

// WithDescription sets the tool's description, which the LLM reads to
// decide when to call it. Default: a generic description of a workflow.
func WithDescription(d string) Option {
	return optionFunc(func(c *config) {
		if d == "" {
			c.bad("WithDescription: empty description")
			return
		}
		c.description = d
	})
}

// WithInputSchema replaces the tool's input schema, a JSON schema object.
// When the schema names its properties other than userInput and
// workflowStateData, also set WithUserInputExtractor and
// WithStateDataExtractor, and a PromptBuilder whose prompts use the new names.
// Default: userInput (any JSON object) and workflowStateData ({thread_id, seq}).
func WithInputSchema(schema json.RawMessage) Option {
	return optionFunc(func(c *config) {
		var m map[string]any
		if err := json.Unmarshal(schema, &m); err != nil || m == nil {
			c.bad("WithInputSchema: not a JSON object")
			return
		}
		if m["type"] != "object" {
			c.bad(`WithInputSchema: the schema must have "type": "object"`)
			return
		}
		c.inputSchema = append(json.RawMessage(nil), schema...)
	})
}

// WithUserInputExtractor sets how the userInput value is found in the tool's
// arguments. Default: the "userInput" property.
func WithUserInputExtractor(f UserInputExtractor) Option {
	return optionFunc(func(c *config) {
		if f == nil {
			c.bad("WithUserInputExtractor: nil function")
			return
		}
		c.userInput = f
	})
}

// WithStateDataExtractor sets how workflowStateData is found in the tool's
// arguments. Default: the "workflowStateData" property.
func WithStateDataExtractor(f StateDataExtractor) Option {
	return optionFunc(func(c *config) {
		if f == nil {
			c.bad("WithStateDataExtractor: nil function")
			return
		}
		c.stateData = f
	})
}

// WithPromptBuilder replaces the prompts. Embed DefaultPrompts in your type
// to replace only some of them. Default: DefaultPrompts.
func WithPromptBuilder(b PromptBuilder) Option {
	return optionFunc(func(c *config) {
		if b == nil {
			c.bad("WithPromptBuilder: nil builder")
			return
		}
		c.prompts = b
	})
}

// WithCheckpointer sets where checkpoints are stored. The orchestrator does
// not close a store given here. Default: a SQLiteCheckpointer at
// <base>/.magen/workflow-state.db (see WithDir), closed by Close.
func WithCheckpointer(cp Checkpointer) Option {
	return optionFunc(func(c *config) {
		if cp == nil {
			c.bad("WithCheckpointer: nil checkpointer")
			return
		}
		c.checkpointer = cp
	})
}

// WithLogger sets the logger. magen never writes to stdout, which is the
// MCP stdio transport. Default: JSON lines appended to
// <base>/.magen/workflow_logs.json (see WithDir), at the level that the
// LOG_LEVEL environment variable names (debug, info, warn or error), else
// at info.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l == nil {
			c.bad("WithLogger: nil logger")
			return
		}
		c.logger = l
	})
}

// WithDir sets the base directory of the default checkpoint store and log
// file, which go in <dir>/.magen/. The .magen directory is kept 0700 and
// its files 0600, even if they existed with looser modes. Default: $PROJECT_PATH if set, else the user's home
// directory.
func WithDir(dir string) Option {
	return optionFunc(func(c *config) {
		if dir == "" {
			c.bad("WithDir: empty directory")
			return
		}
		c.dir = dir
	})
}

// WithSQLiteOptions configures the default SQLite store, for example
// WithSQLiteOptions(WithDurability(DurabilityNormal), WithKeepLast(50)).
// It cannot be combined with WithCheckpointer. Default: none (FULL
// durability, full history).
func WithSQLiteOptions(opts ...SQLiteOption) Option {
	return optionFunc(func(c *config) {
		c.sqliteOpts = append(c.sqliteOpts[:len(c.sqliteOpts):len(c.sqliteOpts)], opts...)
	})
}

// WithStepLimit caps the nodes one turn may run before the thread fails
// with ErrStepLimit, which guards against endless loops. Default: 1000.
func WithStepLimit(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.bad("WithStepLimit(%d): want at least 1", n)
			return
		}
		c.stepLimit = n
	})
}

// WithMaxInputBytes caps the size of one call's arguments, as JSON. A larger
// call gets a tool error wrapping ErrInputTooLarge. Default: 1 MiB.
func WithMaxInputBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n < 64 {
			c.bad("WithMaxInputBytes(%d): want at least 64", n)
			return
		}
		c.maxInputBytes = n
	})
}

// WithClock sets the clock that stamps checkpoints, for deterministic
// tests. Default: time.Now.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) {
		if now == nil {
			c.bad("WithClock: nil clock")
			return
		}
		c.clock = now
	})
}

// WithIDSource sets how new thread ids are made, for deterministic tests.
// Thread ids are the only key to a thread, so production code should keep
// the default. Default: crypto/rand.Text, 128 bits of randomness.
func WithIDSource(newID func() string) Option {
	return optionFunc(func(c *config) {
		if newID == nil {
			c.bad("WithIDSource: nil function")
			return
		}
		c.newID = newID
	})
}

// WithInitialState sets how the first call's userInput (nil when the call
// has none) becomes the graph's initial state. S must be the state type of
// the graph passed to New. Default: userInput is decoded into S with
// encoding/json; no userInput gives the zero S.
func WithInitialState[S any](f func(ctx context.Context, userInput json.RawMessage) (S, error)) Option {
	return optionFunc(func(c *config) {
		if f == nil {
			c.bad("WithInitialState: nil function")
			return
		}
		c.initialState = f
	})
}
