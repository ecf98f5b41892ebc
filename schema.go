package magen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/xeipuuv/gojsonschema"
)

var (
	derived sync.Map // reflect.Type → derivedSchema; bounded by the program's types

	// compiled maps schema text to compiledSchema. Schemas built at run
	// time (Extract, Select) could grow it without end in a long-running
	// server, so it is emptied when it holds maxCompiled entries.
	compiled      sync.Map
	compiledCount atomic.Int64
)

const maxCompiled = 4096

type derivedSchema struct {
	raw json.RawMessage
	err error
}

type compiledSchema struct {
	s   *gojsonschema.Schema
	err error
}

// SchemaFor returns the JSON schema magen derives for results of
// type T: the schema Ask[T] uses when its Guidance has none. Field
// descriptions come from `jsonschema:"..."` struct tags. Result schemas are
// validated as draft-07, the newest dialect gojsonschema understands, so the
// derived schema omits $schema and uses no newer keywords.
func SchemaFor[T any]() (json.RawMessage, error) {
	return schemaForType(reflect.TypeFor[T]())
}

func schemaForType(t reflect.Type) (json.RawMessage, error) {
	if v, ok := derived.Load(t); ok {
		d := v.(derivedSchema)
		return d.raw, d.err
	}
	raw, err := deriveSchema(t)
	derived.Store(t, derivedSchema{raw, err})
	return raw, err
}

func deriveSchema(t reflect.Type) (json.RawMessage, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct && base.Kind() != reflect.Map {
		return nil, fmt.Errorf("result type %s is not a struct or map: the LLM answers with a JSON object", t)
	}
	s, err := jsonschema.ForType(base, &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[json.RawMessage](): {},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("derive schema for %s: %w", t, err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("derive schema for %s: %w", t, err)
	}
	if _, err := compileSchema(raw); err != nil {
		return nil, fmt.Errorf("derive schema for %s: %w", t, err)
	}
	return raw, nil
}

// compileSchema compiles a result schema once and caches it by its text.
// Compiled schemas are safe for concurrent use.
func compileSchema(raw json.RawMessage) (*gojsonschema.Schema, error) {
	if v, ok := compiled.Load(string(raw)); ok {
		c := v.(compiledSchema)
		return c.s, c.err
	}
	s, err := compileSchemaUncached(raw)
	if compiledCount.Add(1) > maxCompiled {
		compiled.Clear()
		compiledCount.Store(1)
	}
	compiled.Store(string(raw), compiledSchema{s, err})
	return s, err
}

func compileSchemaUncached(raw json.RawMessage) (*gojsonschema.Schema, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	if typ, _ := root["type"].(string); typ != "object" {
		return nil, fmt.Errorf(`schema must have "type": "object": the LLM answers with a JSON object`)
	}
	if err := checkSchema(root, "#"); err != nil {
		return nil, err
	}
	l := gojsonschema.NewSchemaLoader()
	l.Draft = gojsonschema.Draft7
	s, err := l.Compile(gojsonschema.NewGoLoader(root))
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return s, nil
}

// unsupported lists keywords of drafts newer than 7. gojsonschema would
// silently ignore them, so a schema using them would not mean what it says.
var unsupported = []string{
	"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
	"dependentSchemas", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
	"$recursiveAnchor", "minContains", "maxContains", "$vocabulary",
}

// checkSchema walks a schema and rejects what gojsonschema would get wrong:
// keywords from newer drafts, and $ref or $id values that could make it
// fetch a document over the network.
func checkSchema(v any, at string) error {
	s, ok := v.(map[string]any)
	if !ok {
		return nil // true, false, or an error gojsonschema reports
	}
	for _, k := range unsupported {
		if _, ok := s[k]; ok {
			return fmt.Errorf("schema at %s uses %q, which needs a draft newer than 7; magen validates with draft-07", at, k)
		}
	}
	if d, ok := s["$schema"].(string); ok && !strings.Contains(d, "draft-07") && !strings.Contains(d, "draft-06") && !strings.Contains(d, "draft-04") {
		return fmt.Errorf("schema at %s declares $schema %q; magen validates with draft-07", at, d)
	}
	if ref, ok := s["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
		return fmt.Errorf("schema at %s has $ref %q: only references within the schema (#...) are allowed", at, ref)
	}
	for _, k := range []string{"$id", "id"} {
		if id, ok := s[k].(string); ok && strings.Contains(id, ":") {
			return fmt.Errorf("schema at %s has %s %q: absolute ids are not allowed", at, k, id)
		}
	}
	for k, sub := range s {
		switch k {
		case "properties", "patternProperties", "definitions", "$defs", "dependencies":
			m, _ := sub.(map[string]any)
			for name, child := range m {
				if err := checkSchema(child, at+"/"+k+"/"+name); err != nil {
					return err
				}
			}
		case "items", "allOf", "anyOf", "oneOf":
			if list, ok := sub.([]any); ok {
				for i, child := range list {
					if err := checkSchema(child, at+"/"+k+"/"+strconv.Itoa(i)); err != nil {
						return err
					}
				}
				continue
			}
			if err := checkSchema(sub, at+"/"+k); err != nil {
				return err
			}
		case "additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else":
			if err := checkSchema(sub, at+"/"+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidateResult checks a result against a result schema, as the
// orchestrator does when the LLM answers, and lists what failed; nil means
// valid. The error is for a schema magen cannot use: not an object schema,
// not draft-07, or with a remote $ref. Schemas are compiled once and cached.
func ValidateResult(schema, result json.RawMessage) ([]FieldError, error) {
	return validateResult(schema, result)
}

// validateResult checks a result against a schema and lists what failed.
func validateResult(schema, doc json.RawMessage) ([]FieldError, error) {
	s, err := compileSchema(schema)
	if err != nil {
		return nil, err
	}
	res, err := s.Validate(gojsonschema.NewBytesLoader(doc))
	if err != nil {
		return []FieldError{{Field: "(root)", Problem: "not valid JSON: " + err.Error()}}, nil
	}
	if res.Valid() {
		return nil, nil
	}
	out := make([]FieldError, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		out = append(out, FieldError{Field: e.Field(), Problem: e.Description()})
	}
	return out, nil
}
