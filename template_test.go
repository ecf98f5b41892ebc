package magen_test

import (
	"context"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

type release struct {
	Channel  string `json:"channel"`
	Notes    string `json:"notes"`
	Approved bool   `json:"approved,omitempty"`
	Rounds   int    `json:"rounds,omitempty"`
}

var channels = []magen.Choice{
	{ID: "stable", Description: "everyone"},
	{ID: "beta", Label: "Beta testers", Description: "opt-in users"},
}

func releaseGraph() *magen.Graph[release] {
	return magen.NewGraph[release]().
		AddNode("channel", func(ctx context.Context, r release) (release, error) {
			sel, err := magen.Select(ctx, magen.Template{Task: "Pick the release channel for these notes.", Context: []string{r.Notes}}, channels)
			if err != nil {
				return r, err
			}
			r.Channel = sel.ID
			return r, nil
		}).
		AddNode("approve", func(ctx context.Context, r release) (release, error) {
			a, err := magen.Approve(ctx, magen.Template{Role: "a release manager", Task: "Get the user's approval to publish."}, r.Notes)
			if err != nil {
				return r, err
			}
			r.Approved = a.Approved
			if !a.Approved {
				rev, err := magen.Revise(ctx, magen.Template{Task: "Revise the release notes."}, r.Notes, a.Feedback)
				if err != nil {
					return r, err
				}
				r.Notes, r.Rounds = rev.Revised, r.Rounds+1
			}
			return r, nil
		}).
		AddEdge(magen.Start, "channel").
		AddEdge("channel", "approve").
		AddRoute("approve", func(r release) string {
			if r.Approved {
				return "approved"
			}
			return "revised"
		}, magen.Routes{"approved": magen.End, "revised": "approve"})
}

func TestTemplates(t *testing.T) {
	magentest.RunScenarios(t, releaseGraph, []magentest.Scenario[release]{{
		Name:  "approved after one revision",
		Start: release{Notes: "Fixes crash on start."},
		Turns: []magentest.Turn{
			magentest.Invalid("channel", map[string]any{"selected": "nightly", "reason": "x"}),
			magentest.Answer("channel", magen.Selection{ID: "beta", Reason: "risky fix"}),
			magentest.Answer("approve", magen.Approval{Feedback: "mention Android"}),
			magentest.Reply("approve", func(p magentest.Prompt) (any, error) {
				if p.Task.Index != 1 || !strings.Contains(p.Task.Instructions, "mention Android") {
					t.Errorf("second task of approve = %+v", p.Task)
				}
				return magen.Revision{Revised: "Fixes crash on start on Android.", Changes: "platform"}, nil
			}),
			magentest.Answer("approve", magen.Approval{Approved: true}),
		},
		Want:   release{Channel: "beta", Notes: "Fixes crash on start on Android.", Approved: true, Rounds: 1},
		Golden: "templates/release",
	}})
}

func TestTemplateText(t *testing.T) {
	golden(t, "templates/text.md", magen.Template{
		Role:         "a careful release manager.",
		Task:         "Write the release notes.",
		Context:      []string{"Version 2.1 fixes three crashes.", "The audience is end users."},
		Instructions: []string{"Keep it under 100 words.", "No internal ticket numbers."},
		Output:       "Markdown, one bullet per change.",
	}.Text())
	if got := (magen.Template{Task: "Only a task."}).Text(); got != "Only a task." {
		t.Errorf("Text() = %q", got)
	}
}
