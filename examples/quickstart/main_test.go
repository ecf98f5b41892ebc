package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

func TestTriage(t *testing.T) {
	const down = "Checkout is down; nobody can pay."
	magentest.RunScenarios(t, Graph, []magentest.Scenario[Ticket]{{
		Name:  "urgent enterprise ticket escalates",
		Start: Ticket{Email: "ada@example.com", Message: down},
		Turns: []magentest.Turn{
			magentest.Answer("triage", Triage{Category: "bug", Urgent: true}),
			magentest.Answer("reply", Reply{Text: "INC-892380 is open."}),
		},
		Want: Ticket{Email: "ada@example.com", Message: down, Plan: "enterprise", Category: "bug", Urgent: true,
			Incident: "INC-892380", Reply: "INC-892380 is open."},
		Golden: "urgent",
	}, {
		Name:  "urgent ticket on the free plan is routine",
		Start: Ticket{Email: "bob@example.com", Message: down},
		Turns: []magentest.Turn{
			magentest.Answer("triage", Triage{Category: "bug", Urgent: true}),
			magentest.Answer("reply", Reply{Text: "We're on it."}),
		},
		Want: Ticket{Email: "bob@example.com", Message: down, Plan: "free", Category: "bug", Urgent: true, Reply: "We're on it."},
	}, {
		Name:  "unknown category fails the thread",
		Start: Ticket{Email: "bob@example.com", Message: "hi"},
		Turns: []magentest.Turn{magentest.Answer("triage", Triage{Category: "chit-chat"})},
		Want:  Ticket{Email: "bob@example.com", Message: "hi", Plan: "free"}, Status: magen.StatusFailed,
	}, {
		Name:  "empty ticket fails in lookup",
		Start: Ticket{Email: "bob@example.com"},
		Want:  Ticket{Email: "bob@example.com"}, Status: magen.StatusFailed, Calls: 1,
	}}, magen.WithToolID("support-triage"), magen.WithTitle("Support triage"))
}

// TestDrive runs the quickstart's own scripted LLM, as `go run` does.
func TestDrive(t *testing.T) {
	h := magentest.New(t, Graph(), magen.WithToolID("support-triage"))
	var out bytes.Buffer
	sd, err := drive(context.Background(), h.Server, Ticket{Email: "ada@example.com", Message: "nobody can log in"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	got, status, err := h.Orchestrator.State(context.Background(), sd.ThreadID)
	if err != nil || status != magen.StatusCompleted || !strings.Contains(got.Reply, got.Incident) || got.Incident == "" {
		t.Errorf("final state = %+v %s %v, want completed with the incident in the reply", got, status, err)
	}
	if n := strings.Count(out.String(), "──── turn"); n != 3 {
		t.Errorf("printed %d turns, want 3:\n%s", n, out.String())
	}
}

func TestReadmeShowsTheGraph(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```mermaid\n"+Graph().Mermaid()+"```") {
		t.Errorf("README.md does not show the quickstart graph; paste this:\n%s", Graph().Mermaid())
	}
}
