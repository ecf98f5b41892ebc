package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/server"
)

func TestQuickstart(t *testing.T) {
	tests := []struct {
		name   string
		start  Ticket
		want   Ticket
		status magen.Status
	}{
		{"urgent enterprise ticket escalates",
			Ticket{Email: "ada@example.com", Message: "Checkout is down; nobody can pay."},
			Ticket{Email: "ada@example.com", Message: "Checkout is down; nobody can pay.", Plan: "enterprise", Category: "bug", Urgent: true,
				Incident: "INC-892380", Reply: "Sorry for the trouble! Incident INC-892380 is open and our on-call engineers are on it."},
			magen.StatusCompleted},
		{"routine ticket gets a reply",
			Ticket{Email: "bob@example.com", Message: "How do I export data?"},
			Ticket{Email: "bob@example.com", Message: "How do I export data?", Plan: "free", Category: "bug",
				Reply: "Thanks for reporting this; we are looking into it."},
			magen.StatusCompleted},
		{"empty ticket fails in lookup",
			Ticket{Email: "bob@example.com"},
			Ticket{Email: "bob@example.com"},
			magen.StatusFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orch, err := magen.New(Graph(), magen.WithToolID("support-triage"), magen.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false))
			orch.Register(s)
			sd, err := drive(context.Background(), s, tc.start, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got, status, err := orch.State(context.Background(), sd.ThreadID)
			if err != nil || got != tc.want || status != tc.status {
				t.Errorf("final state = %+v %s %v\nwant %+v %s", got, status, err, tc.want, tc.status)
			}
		})
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
