// Command mobileapp is magen's reference workflow: it turns a request such
// as "an Android app called Field Notes for Acme" into a generated project,
// in eleven nodes. It gathers the project's properties, asking the user for
// what is missing; fetches and selects a template; gathers the template's
// own properties; generates the files; builds them, reporting progress; and
// when the build fails, delegates the fix to a build-recovery tool, up to
// three times.
//
//	go run ./examples/mobileapp                 # scripted LLM, prints every prompt
//	go run ./examples/mobileapp -fail-builds 1  # the first build fails and is recovered
//	go run ./examples/mobileapp -stdio          # serve it to a real MCP client
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve the orchestrator over stdio for a real MCP client")
	failBuilds := flag.Int("fail-builds", 0, "make the first N builds fail, to show build recovery")
	request := flag.String("request", "Create an Android app called Field Notes for Acme Corp, package com.acme.fieldnotes, Compose, min SDK 26.", "the user's first message")
	flag.Parse()
	log := slog.New(magen.NewConsoleHandler(os.Stderr, slog.LevelInfo))
	if err := run(*stdio, *failBuilds, *request, log); err != nil {
		log.Error("mobileapp", "error", err)
		os.Exit(1)
	}
}

// failingBuilder fails the first n builds, then checks the build.
func failingBuilder(n int) Builder {
	return func(ctx context.Context, dir string, attempt int) error {
		if attempt <= n {
			return fmt.Errorf("e: MainActivity.kt:3:1 Unresolved reference: ComponentActivity (build %d)", attempt)
		}
		return CheckBuild(ctx, dir, attempt)
	}
}

func options(log *slog.Logger) []magen.Option {
	return []magen.Option{
		magen.WithToolID("mobile-app"),
		magen.WithTitle("Mobile app"),
		magen.WithDescription(`Creates a mobile app project. Start it with userInput {"request": "<the user's request>"}.`),
		magen.WithLogger(log),
		magen.WithPromptBuilder(Prompts{}),
	}
}

func run(stdio bool, failBuilds int, request string, log *slog.Logger) error {
	g := Graph(failingBuilder(failBuilds))
	if stdio {
		orch, err := magen.New(g, options(log)...)
		if err != nil {
			return err
		}
		defer orch.Close()
		s := server.NewMCPServer("magen-mobileapp", "0.1.0", server.WithToolCapabilities(false))
		orch.Register(s)
		if err := RegisterTools(orch, s); err != nil {
			return err
		}
		return server.ServeStdio(s)
	}
	h, err := magentest.NewHarness(g, options(log)...)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := RegisterTools(h.Orchestrator, h.Server); err != nil {
		return err
	}
	out, err := h.Run(context.Background(), App{Request: request}, magentest.NewLLMFunc(ScriptedLLM))
	for _, p := range out.Prompts {
		from := "mobile-app"
		if p.Tool != "" {
			from = p.Tool
		}
		fmt.Printf("──── call %d (%s, %d bytes) ────\n%s\n", p.Call, from, len(p.Text), p.Text)
	}
	if err != nil {
		return err
	}
	state, _ := json.MarshalIndent(out.State, "", "  ")
	fmt.Printf("──── %s after %d tool calls; final state ────\n%s\n", out.Status, out.Calls, state)
	if out.Status != magen.StatusCompleted {
		return errors.New(out.Last.Error)
	}
	return nil
}

// ScriptedLLM stands in for the LLM: it answers each task the way a
// sensible model would, from the task text.
func ScriptedLLM(p magentest.Prompt) (any, error) {
	task := p.Task.Instructions
	switch p.Node() {
	case "project.extract", "options.extract":
		return map[string]any{"extractedProperties": guess(task)}, nil
	case "project.ask", "options.ask":
		return map[string]any{"userUtterance": "Android, Field Notes, com.acme.fieldnotes, Acme Corp, min SDK 26"}, nil
	case "selectTemplate":
		if strings.Contains(task, "Compose") {
			return magen.Selection{ID: "android-compose", Reason: "the user asked for Compose"}, nil
		}
		return magen.Selection{ID: "android-views", Reason: "the classic choice"}, nil
	case "recover":
		return Recovery{Fixed: true, Summary: "added the missing androidx.activity import"}, nil
	}
	return nil, fmt.Errorf("no scripted answer for node %q", p.Node())
}

// guess extracts what a model would from the request in the task text.
func guess(task string) map[string]any {
	out := map[string]any{}
	has := func(s string) bool { return strings.Contains(task, s) }
	if has("`platform`") {
		switch {
		case has("> Create an Android"), has("> Android"):
			out["platform"] = "Android"
		case has("iOS app"):
			out["platform"] = "iOS"
		}
	}
	if has("`projectName`") && has("Field Notes") {
		out["projectName"] = "Field Notes"
	}
	if has("`packageName`") && has("com.acme.fieldnotes") {
		out["packageName"] = "com.acme.fieldnotes"
	}
	if has("`organization`") && has("Acme Corp") {
		out["organization"] = "Acme Corp"
	}
	if has("`minSdk`") && has("min SDK 26") {
		out["minSdk"] = 26
	}
	return out
}
