package magen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Property is one piece of input a workflow needs from the user, such as a
// project name. Collect a set of them with Inputs.
type Property struct {
	// Name is the property's key in Values and in the LLM's answers, such
	// as "projectName".
	Name string
	// FriendlyName is how prompts name it to people, such as "project
	// name". Default: Name.
	FriendlyName string
	// Description tells the LLM and the user what the value means.
	Description string
	// Schema is the JSON schema (draft-07) a value must match. A value that
	// fails it is dropped and reported, never stored. Default: any value.
	Schema json.RawMessage
	// Optional properties are extracted when given, but not asked for.
	Optional bool
}

// PropertyOf returns a property whose schema is derived from T, such as
// string, int, bool or a struct.
func PropertyOf[T any](name, friendlyName, description string) Property {
	p := Property{Name: name, FriendlyName: friendlyName, Description: description}
	s, err := jsonschema.ForType(reflect.TypeFor[T](), &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}},
	})
	if err == nil {
		p.Schema, _ = json.Marshal(s)
	}
	return p
}

func (p Property) friendly() string {
	if p.FriendlyName != "" {
		return p.FriendlyName
	}
	return p.Name
}

// Values holds collected property values as JSON, by property name. A key
// is present only with a value that passed its property's schema.
type Values map[string]json.RawMessage

// Decode decodes the values into v, typically a pointer to a struct whose
// json field names are the property names.
func (v Values) Decode(out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// InputState is where an Inputs block keeps its progress. Put one in your
// state struct for each block.
type InputState struct {
	// Values are the property values collected so far.
	Values Values `json:"values,omitempty"`
	// Rejected lists the values the LLM extracted that failed their
	// property's schema in the last extraction; the next question to the
	// user mentions them.
	Rejected []FieldError `json:"rejected,omitempty"`
	// Utterance is the user's last answer, until it is extracted.
	Utterance string `json:"utterance,omitempty"`
	// Rounds counts the questions asked so far.
	Rounds int `json:"rounds,omitempty"`
}

// Inputs is a reusable block of three nodes that collects Properties into
// an InputState: extract pulls typed values out of free text, a router
// checks that every required property is present, and ask asks the user
// for the missing ones and waits for their answer, then extract runs on
// that answer. It loops until every required property is present or
// MaxRounds questions were asked.
//
// AddTo adds the nodes "<Name>.extract" and "<Name>.ask" and their edges;
// route into the block with an edge to Entry(). Several blocks fit in one
// graph under different names.
type Inputs[S any] struct {
	// Name prefixes the block's node names. Required.
	Name       string
	Properties []Property
	// PropertiesOf, if set, computes the properties from the state each
	// time they are needed, instead of Properties: for inputs that depend
	// on an earlier choice. Their schemas are checked when used.
	PropertiesOf func(s S) []Property
	// State returns where in the workflow state the block keeps its
	// progress. Required.
	State func(s *S) *InputState
	// Source returns the text to extract from when the block is entered,
	// such as the user's first request. If nil or empty, the block starts
	// by asking.
	Source func(s S) string
	// Present decides whether a stored value counts as given. Default:
	// every stored value does, including false, 0 and "": they are valid
	// values of their types, not absences.
	Present func(p Property, v json.RawMessage) bool
	// MaxRounds bounds the questions to the user. Default: 3.
	MaxRounds int
	// Next is the node after every required property is present. Required.
	Next string
	// Incomplete is the node after MaxRounds questions without every
	// required property. Default: the thread fails with an error naming
	// the missing properties.
	Incomplete string
}

// Entry is the name of the block's first node.
func (in Inputs[S]) Entry() string { return in.Name + ".extract" }

// AskNode is the name of the node that asks the user.
func (in Inputs[S]) AskNode() string { return in.Name + ".ask" }

// AddTo adds the block to g and returns g.
func (in Inputs[S]) AddTo(g *Graph[S]) *Graph[S] {
	switch {
	case in.Name == "":
		g.errs = append(g.errs, fmt.Errorf("%w: an Inputs block has no name", ErrInvalidGraph))
		return g
	case in.State == nil:
		g.fail(in.Entry(), "Inputs block has no State function")
		return g
	case in.Next == "":
		g.fail(in.Entry(), "Inputs block has no Next node")
		return g
	}
	for _, p := range in.Properties {
		if p.Name == "" {
			g.fail(in.Entry(), "Inputs block has a property with no name")
		}
		if p.Schema != nil {
			if _, err := compileSchema(valueSchema(p.Schema)); err != nil {
				g.fail(in.Entry(), fmt.Sprintf("property %q: %v", p.Name, err))
			}
		}
	}
	if in.MaxRounds <= 0 {
		in.MaxRounds = 3
	}
	routes := Routes{"complete": in.Next, "missing": in.AskNode()}
	if in.Incomplete != "" {
		routes["incomplete"] = in.Incomplete
	}
	return g.AddNode(in.Entry(), in.extract).
		AddNode(in.AskNode(), in.ask).
		AddRoute(in.Entry(), in.route, routes).
		AddEdge(in.AskNode(), in.Entry())
}

func (in Inputs[S]) props(s S) []Property {
	if in.PropertiesOf != nil {
		return in.PropertiesOf(s)
	}
	return in.Properties
}

// Missing returns the required properties that s does not have yet.
func (in Inputs[S]) Missing(s S) []Property {
	st := in.State(&s)
	var out []Property
	for _, p := range in.props(s) {
		if p.Optional {
			continue
		}
		v, ok := st.Values[p.Name]
		if !ok || (in.Present != nil && !in.Present(p, v)) {
			out = append(out, p)
		}
	}
	return out
}

func (in Inputs[S]) route(s S) string {
	if len(in.Missing(s)) == 0 {
		return "complete"
	}
	if in.State(&s).Rounds >= in.MaxRounds {
		return "incomplete"
	}
	return "missing"
}

func (in Inputs[S]) extract(ctx context.Context, s S) (S, error) {
	st := in.State(&s)
	text := st.Utterance
	if text == "" && st.Rounds == 0 && in.Source != nil {
		text = in.Source(s)
	}
	props := in.props(s)
	if strings.TrimSpace(text) == "" || len(props) == 0 {
		return in.checkBound(s)
	}
	extracted, err := Extract(ctx, text, props)
	if err != nil {
		return s, err
	}
	st.Rejected = extracted.Rejected
	if st.Values == nil {
		st.Values = Values{}
	}
	for name, v := range extracted.Values {
		st.Values[name] = v
	}
	st.Utterance = ""
	return in.checkBound(s)
}

// checkBound fails the thread when the questions are used up, unless the
// block has an Incomplete node to go to.
func (in Inputs[S]) checkBound(s S) (S, error) {
	if in.Incomplete == "" && in.route(s) == "incomplete" {
		names := make([]string, 0)
		for _, p := range in.Missing(s) {
			names = append(names, p.friendly())
		}
		return s, fmt.Errorf("%w: still missing %s after %d questions", ErrInputIncomplete, strings.Join(names, ", "), in.State(&s).Rounds)
	}
	return s, nil
}

func (in Inputs[S]) ask(ctx context.Context, s S) (S, error) {
	st := in.State(&s)
	utterance, err := GetInput(ctx, in.Missing(s), st.Rejected)
	if err != nil {
		return s, err
	}
	st.Utterance = utterance
	st.Rounds++
	return s, nil
}

// GetInput asks the LLM to ask the user for the given properties and to
// wait for the user's own answer, and returns that answer. rejected, if any,
// explains values that were given before but not accepted.
func GetInput(ctx context.Context, props []Property, rejected []FieldError) (string, error) {
	var b strings.Builder
	b.WriteString("Ask the user for the following information:\n\n")
	for _, p := range props {
		fmt.Fprintf(&b, "- **%s** (`%s`)", p.friendly(), p.Name)
		if p.Description != "" {
			b.WriteString(": ")
			b.WriteString(p.Description)
		}
		b.WriteString("\n")
	}
	if len(rejected) > 0 {
		b.WriteString("\nThese values were given before but could not be accepted; ask for them again and say why:\n\n")
		for _, r := range rejected {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Field, r.Problem)
		}
	}
	b.WriteString("\nThen stop and wait for the user to answer. Do not answer for the user, guess, or fill in defaults: only the user's own reply counts. When the user has answered, put their reply in `userUtterance`.")
	out, err := Ask[struct {
		UserUtterance json.RawMessage `json:"userUtterance" jsonschema:"the user's reply, word for word, as a string"`
	}](ctx, Guidance{Task: b.String(), Example: map[string]any{"userUtterance": "<the user's reply, word for word>"}})
	if err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(out.UserUtterance, &s) == nil {
		return s, nil
	}
	return string(out.UserUtterance), nil
}

// Extraction is the result of Extract.
type Extraction struct {
	// Values are the values that passed their property's schema.
	Values Values
	// Rejected lists the values that failed, with why.
	Rejected []FieldError
}

// Extract asks the LLM to pull values for props out of text. The LLM
// answers null for what the text does not say or what it is unsure of;
// those are left out. Each value is checked against its property's schema:
// a value that fails is dropped and listed in Rejected, never returned in
// Values.
func Extract(ctx context.Context, text string, props []Property) (Extraction, error) {
	schema, example := extractionSchema(props)
	var b strings.Builder
	b.WriteString("Extract the values of the properties below from the user's text. Use only what the text says: for a property the text does not state, or that you are unsure of, answer null. Do not guess or make up values.\n\nThe user's text:\n\n")
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		b.WriteString("> ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\nThe properties:\n\n")
	for _, p := range props {
		fmt.Fprintf(&b, "- `%s` (%s)", p.Name, p.friendly())
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
		b.WriteString("\n")
	}
	out, err := Ask[struct {
		Extracted map[string]json.RawMessage `json:"extractedProperties"`
	}](ctx, Guidance{Task: b.String(), Schema: schema, Example: example})
	if err != nil {
		return Extraction{}, err
	}
	res := Extraction{Values: Values{}}
	for _, p := range props {
		v, ok := out.Extracted[p.Name]
		if !ok || len(v) == 0 || string(v) == "null" {
			continue
		}
		if p.Schema != nil {
			problems, err := validateResult(valueSchema(p.Schema), wrapValue(v))
			if err != nil {
				return res, fmt.Errorf("property %q: %w", p.Name, err)
			}
			if len(problems) > 0 {
				msgs := make([]string, len(problems))
				for i, pr := range problems {
					msgs[i] = pr.Problem
				}
				res.Rejected = append(res.Rejected, FieldError{Field: p.Name, Problem: fmt.Sprintf("%s was not accepted: %s", v, strings.Join(msgs, "; "))})
				continue
			}
		}
		res.Values[p.Name] = v
	}
	return res, nil
}

// extractionSchema is the result schema of Extract. Each property accepts
// any value, so that one bad value does not make the LLM redo the others;
// the property's own schema is shown in its description and checked by
// Extract, which drops what fails. Properties keep their declared order.
func extractionSchema(props []Property) (json.RawMessage, json.RawMessage) {
	var b, ex bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"extractedProperties":{"type":"object","description":"each property's value, or null","properties":{`)
	ex.WriteString(`{"extractedProperties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
			ex.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		desc, _ := json.Marshal(propertyHint(p))
		fmt.Fprintf(&b, `%s:{"description":%s}`, name, desc)
		fmt.Fprintf(&ex, `%s:null`, name)
	}
	b.WriteString(`},"additionalProperties":false}},"required":["extractedProperties"],"additionalProperties":false}`)
	ex.WriteString(`}}`)
	return b.Bytes(), ex.Bytes()
}

// propertyHint describes a property and its expected value for the LLM.
func propertyHint(p Property) string {
	desc := strings.TrimSpace(p.Description)
	if desc == "" {
		desc = p.friendly()
	}
	if !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	if p.Schema != nil {
		var only struct {
			Type string `json:"type"`
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(p.Schema, &keys) == nil && len(keys) == 1 && json.Unmarshal(p.Schema, &only) == nil && only.Type != "" {
			desc += " Expected type: " + only.Type + "."
		} else {
			desc += " Expected: a value matching the JSON schema " + string(p.Schema) + "."
		}
	}
	return desc + " null if the text does not say."
}

// valueSchema wraps a property schema so that a bare value can be
// validated as the object {"value": v}.
func valueSchema(s json.RawMessage) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"value":` + string(s) + `},"required":["value"]}`)
}

func wrapValue(v json.RawMessage) json.RawMessage {
	return json.RawMessage(`{"value":` + string(v) + `}`)
}
