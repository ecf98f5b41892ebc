package magen_test

import (
	"context"
	"fmt"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

// Signup is the state of the Inputs example.
type Signup struct {
	Request string           `json:"request"`
	Account magen.InputState `json:"account"`
}

// An Inputs block extracts properties from the first request, asks the user
// for what is missing, and loops until every required property is present.
func ExampleInputs() {
	account := magen.Inputs[Signup]{
		Name: "account",
		Properties: []magen.Property{
			magen.PropertyOf[string]("email", "email address", "where to send the receipt"),
			magen.PropertyOf[bool]("newsletter", "newsletter", "whether to subscribe"),
		},
		State:  func(s *Signup) *magen.InputState { return &s.Account },
		Source: func(s Signup) string { return s.Request },
		Next:   magen.End,
	}
	g := magen.NewGraph[Signup]().AddEdge(magen.Start, account.Entry())
	account.AddTo(g)

	h, err := magentest.NewHarness(g)
	if err != nil {
		panic(err)
	}
	defer h.Close()
	out, err := h.Run(context.Background(), Signup{Request: "Sign me up, no newsletter please."}, magentest.NewLLM(
		magentest.Answer("account.extract", map[string]any{"extractedProperties": map[string]any{"email": nil, "newsletter": false}}),
		magentest.Answer("account.ask", map[string]any{"userUtterance": "ada@example.com"}),
		magentest.Answer("account.extract", map[string]any{"extractedProperties": map[string]any{"email": "ada@example.com"}}),
	))
	if err != nil {
		panic(err)
	}
	var v struct {
		Email      string `json:"email"`
		Newsletter bool   `json:"newsletter"`
	}
	_ = out.State.Account.Values.Decode(&v)
	fmt.Println(out.Status, out.Calls, "calls;", out.State.Account.Rounds, "question")
	fmt.Printf("%+v\n", v)
	// Output:
	// completed 4 calls; 1 question
	// {Email:ada@example.com Newsletter:false}
}

// PropertyOf derives a property's schema from a Go type.
func ExamplePropertyOf() {
	p := magen.PropertyOf[int]("minSdk", "minimum SDK", "the lowest supported SDK level")
	fmt.Println(p.Name, string(p.Schema))
	// Output:
	// minSdk {"type":"integer"}
}

// A Template composes the parts of a task.
func ExampleTemplate() {
	fmt.Println(magen.Template{
		Role:         "a release manager",
		Task:         "Write the release notes for version 2.1.",
		Context:      []string{"It fixes three crashes."},
		Instructions: []string{"Keep it under 100 words."},
	}.Text())
	// Output:
	// You are a release manager.
	//
	// Write the release notes for version 2.1.
	//
	// ## Context
	//
	// It fixes three crashes.
	//
	// ## Instructions
	//
	// 1. Keep it under 100 words.
}

// Select asks the LLM to pick one of N options; its schema only accepts
// their ids.
func ExampleSelect() {
	type State struct{ Template string }
	g := magen.NewGraph[State]().
		AddNode("pick", func(ctx context.Context, s State) (State, error) {
			sel, err := magen.Select(ctx, magen.Template{Task: "Pick the project template that fits the user's request."}, []magen.Choice{
				{ID: "ios-swiftui", Description: "an iOS app in SwiftUI"},
				{ID: "android-compose", Description: "an Android app in Jetpack Compose"},
			})
			if err != nil {
				return s, err
			}
			s.Template = sel.ID
			return s, nil
		}).
		AddEdge(magen.Start, "pick").AddEdge("pick", magen.End)
	h, _ := magentest.NewHarness(g)
	defer h.Close()
	out, err := h.Run(context.Background(), nil, magentest.NewLLM(
		magentest.Invalid("pick", magen.Selection{ID: "flutter", Reason: "cross-platform"}),
		magentest.Answer("pick", magen.Selection{ID: "android-compose", Reason: "the user asked for Android"}),
	))
	fmt.Println(out.State.Template, out.Calls, err)
	// Output:
	// android-compose 3 <nil>
}

// Extract pulls typed values out of free text. A value that fails its
// property's schema is dropped and reported, never returned.
func ExampleExtract() {
	type Order struct {
		Values   magen.Values       `json:"values"`
		Rejected []magen.FieldError `json:"rejected"`
	}
	props := []magen.Property{
		magen.PropertyOf[int]("quantity", "quantity", "how many to order"),
		{Name: "sku", Description: "the product code, like AB-123", Schema: []byte(`{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"}`)},
		magen.PropertyOf[bool]("gift", "gift wrap", "whether to gift-wrap"),
	}
	g := magen.NewGraph[Order]().
		AddNode("extract", func(ctx context.Context, o Order) (Order, error) {
			x, err := magen.Extract(ctx, "Three of ab123 please, no wrapping.", props)
			if err != nil {
				return o, err
			}
			o.Values, o.Rejected = x.Values, x.Rejected
			return o, nil
		}).
		AddEdge(magen.Start, "extract").AddEdge("extract", magen.End)
	h, _ := magentest.NewHarness(g)
	defer h.Close()
	out, _ := h.Run(context.Background(), nil, magentest.NewLLM(
		magentest.Answer("extract", map[string]any{"extractedProperties": map[string]any{"quantity": 3, "sku": "ab123", "gift": false}}),
	))
	fmt.Printf("quantity=%s gift=%s\n", out.State.Values["quantity"], out.State.Values["gift"])
	fmt.Println(out.State.Rejected[0].Field, "rejected:", out.State.Rejected[0].Problem)
	// Output:
	// quantity=3 gift=false
	// sku rejected: "ab123" was not accepted: Does not match pattern '^[A-Z]{2}-[0-9]{3}$'
}
