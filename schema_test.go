package magen_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/magen-go/magen"
)

// askWith runs a one-node graph whose node asks with the given schema, and
// returns the first result.
func askWith(t *testing.T, schema string) *magen.Result {
	t.Helper()
	_, r := askWithOrch(t, schema)
	return r
}

// askWithOrch is askWith that also returns the orchestrator.
func askWithOrch(t *testing.T, schema string) (*magen.Orchestrator[docState], *magen.Result) {
	t.Helper()
	g := magen.NewGraph[docState]().
		AddNode("ask", func(ctx context.Context, s docState) (docState, error) {
			_, err := magen.Ask[map[string]any](ctx, magen.Guidance{Task: "do it", Schema: json.RawMessage(schema)})
			return s, err
		}).
		AddEdge(magen.Start, "ask").AddEdge("ask", magen.End)
	o := mustNew(t, g)
	r, err := o.Run(context.Background(), magen.Input{})
	if err != nil {
		t.Fatal(err)
	}
	return o, r
}

func TestSchemaRejectedBeforeTheLLMSeesIt(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not JSON", `{`, "not valid JSON"},
		{"not an object schema", `{"type":"string"}`, `"type": "object"`},
		{"draft 2020-12 keyword", `{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"type":"string"}]}}}`, `"prefixItems"`},
		{"2020-12 dialect", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, "draft-07"},
		{"remote $ref", `{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`, "only references within the schema"},
		{"absolute $id", `{"$id":"http://example.com/s.json","type":"object"}`, "absolute ids"},
		{"nested unevaluated", `{"type":"object","allOf":[{"unevaluatedProperties":false}]}`, `"unevaluatedProperties"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := askWith(t, tc.schema)
			if r.Status != magen.StatusFailed || !strings.Contains(r.Error, tc.want) {
				t.Errorf("result = %s %q, want failed mentioning %q", r.Status, r.Error, tc.want)
			}
		})
	}
}

func TestSchemaAccepted(t *testing.T) {
	for name, schema := range map[string]string{
		"draft-07 with local ref":      `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/n"}},"required":["a"]}`,
		"property named like keywords": `{"type":"object","properties":{"$ref":{"type":"string"},"prefixItems":{"type":"string"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if r := askWith(t, schema); r.Status != magen.StatusAwaiting {
				t.Errorf("result = %s %q, want awaiting", r.Status, r.Error)
			}
		})
	}
}

func TestLocalRefIsValidated(t *testing.T) {
	o, r := askWithOrch(t, `{"type":"object","definitions":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/n"}},"required":["a"]}`)
	_, err := o.Run(context.Background(), magen.Input{UserInput: json.RawMessage(`{"a":"seven"}`), StateData: r.StateData})
	if err == nil || !strings.Contains(err.Error(), "Expected: integer") {
		t.Errorf("Run with a string for a $ref'd integer = %v, want a validation error", err)
	}
}

func TestSchemaFor(t *testing.T) {
	type withRaw struct {
		Name  string          `json:"name" jsonschema:"a name"`
		Extra json.RawMessage `json:"extra,omitempty"`
		Tags  []string        `json:"tags,omitempty"`
		Count *int            `json:"count,omitempty"`
	}
	raw, err := magen.SchemaFor[withRaw]()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Schema     string                     `json:"$schema"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || s.Schema != "" || string(s.Properties["extra"]) != "true" {
		t.Errorf("SchemaFor = %s; want an object schema, no $schema, and extra as any JSON", raw)
	}
	if _, err := magen.SchemaFor[string](); err == nil {
		t.Errorf("SchemaFor[string] succeeded; results must be objects")
	}
	if r := func() *magen.Result {
		g := magen.NewGraph[docState]().
			AddNode("ask", func(ctx context.Context, s docState) (docState, error) {
				_, err := magen.Ask[string](ctx, magen.Guidance{Task: "x"})
				return s, err
			}).
			AddEdge(magen.Start, "ask").AddEdge("ask", magen.End)
		o := mustNew(t, g)
		r, _ := o.Run(context.Background(), magen.Input{})
		return r
	}(); r.Status != magen.StatusFailed || !strings.Contains(r.Error, "not a struct or map") {
		t.Errorf("Ask[string] = %+v, want a failed thread explaining why", r)
	}
}
