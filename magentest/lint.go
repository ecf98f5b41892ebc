package magentest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/magen-go/magen"
)

// Lint checks a task the way a careful reviewer would, and returns every
// finding joined (nil if none). It flags empty task text, a result schema
// that is not an object or that magen cannot compile, an example that does
// not match its own schema, and schema properties with no description (the
// LLM fills in fields it understands).
func Lint(t magen.Task) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("node %q task %d: "+format, append([]any{t.NodeID, t.Index}, args...)...))
	}
	switch t.Kind {
	case magen.KindGuidance:
		if strings.TrimSpace(t.Instructions) == "" {
			bad("empty task text")
		}
	case magen.KindDelegate:
		if t.Tool == "" {
			bad("delegate task names no tool")
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(t.ResultSchema, &schema); err != nil || schema == nil {
		bad("result schema is not a JSON object")
		return errors.Join(errs...)
	}
	if schema["type"] != "object" {
		bad("result schema is not an object schema (type %v)", schema["type"])
	}
	if _, err := magen.ValidateResult(t.ResultSchema, json.RawMessage(`{}`)); err != nil {
		bad("result schema does not compile: %v", err)
		return errors.Join(errs...)
	}
	if len(t.Example) > 0 {
		problems, _ := magen.ValidateResult(t.ResultSchema, t.Example)
		for _, p := range problems {
			bad("example does not match the schema: %s: %s", p.Field, p.Problem)
		}
	}
	for _, path := range undescribed(schema, "") {
		bad("property %q has no description", path)
	}
	return errors.Join(errs...)
}

// undescribed lists the properties, at any depth, that have no description.
func undescribed(schema map[string]any, prefix string) []string {
	var out []string
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue // true/false schemas carry no description
		}
		path := prefix + name
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			out = append(out, path)
		}
		out = append(out, undescribed(p, path+".")...)
		if items, ok := p["items"].(map[string]any); ok {
			out = append(out, undescribed(items, path+"[].")...)
		}
	}
	return out
}
