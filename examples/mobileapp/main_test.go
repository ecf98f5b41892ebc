package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/magen-go/magen"
	"github.com/magen-go/magen/magentest"
)

// These scenarios specify the workflow. Each row is one conversation: the
// user's request, the LLM's answers in order, and how the thread ends.
func TestMobileApp(t *testing.T) {
	const full = "Create an Android app called Field Notes for Acme Corp, package com.acme.fieldnotes, Compose, min SDK 26."
	project := magen.InputState{Values: magen.Values{"platform": raw(`"Android"`), "projectName": raw(`"Field Notes"`),
		"packageName": raw(`"com.acme.fieldnotes"`), "organization": raw(`"Acme Corp"`)}}
	android := []Template{catalog[1], catalog[2]}
	for i := range android {
		android[i].Properties = nil // not stored: they come from the catalog
	}
	sdk26 := magen.InputState{Values: magen.Values{"minSdk": raw("26")}}
	files := []string{"Field Notes/README.md", "Field Notes/app.json", "Field Notes/app/src/main/java/com/acme/fieldnotes/MainActivity.kt"}
	extract := func(node string, kv map[string]any) magentest.Turn {
		return magentest.Answer(node, map[string]any{"extractedProperties": kv})
	}
	pickCompose := magentest.Answer("selectTemplate", magen.Selection{ID: "android-compose", Reason: "Compose"})
	fixed := magentest.Answer("recover", Recovery{Fixed: true, Summary: "added an import"})
	everything := extract("project.extract", map[string]any{"platform": "Android", "projectName": "Field Notes",
		"packageName": "com.acme.fieldnotes", "organization": "Acme Corp"})

	type row struct {
		magentest.Scenario[App]
		failBuilds int
	}
	rows := []row{{Scenario: magentest.Scenario[App]{
		Name:  "happy path: everything in the first request",
		Start: App{Request: full},
		Turns: []magentest.Turn{everything, pickCompose, extract("options.extract", map[string]any{"minSdk": 26})},
		Want:  App{Request: full, Project: project, Templates: android, Template: "android-compose", Options: sdk26, Files: files, Built: true},
		Calls: 4, Golden: "happy",
	}}, {Scenario: magentest.Scenario[App]{
		Name:  "missing properties asked for twice",
		Start: App{Request: "I need a new app."},
		Turns: []magentest.Turn{
			extract("project.extract", map[string]any{}),
			magentest.Answer("project.ask", map[string]any{"userUtterance": "Android, called Field Notes"}),
			extract("project.extract", map[string]any{"platform": "Android", "projectName": "Field Notes"}),
			magentest.Answer("project.ask", map[string]any{"userUtterance": "com.acme.fieldnotes, by Acme Corp"}),
			extract("project.extract", map[string]any{"packageName": "com.acme.fieldnotes", "organization": "Acme Corp"}),
			pickCompose,
			extract("options.extract", map[string]any{"minSdk": nil}),
			magentest.Answer("options.ask", map[string]any{"userUtterance": "26"}),
			extract("options.extract", map[string]any{"minSdk": 26}),
		},
		Want: App{Request: "I need a new app.", Project: withRounds(project, 2), Templates: android, Template: "android-compose",
			Options: withRounds(sdk26, 1), Files: files, Built: true},
		Calls: 10,
	}}, {Scenario: magentest.Scenario[App]{
		Name:  "invalid LLM answers repaired",
		Start: App{Request: full},
		Turns: []magentest.Turn{
			magentest.Invalid("project.extract", map[string]any{"platform": "Android"}), // not wrapped in extractedProperties
			everything,
			magentest.Invalid("selectTemplate", magen.Selection{ID: "flutter", Reason: "cross-platform"}),
			pickCompose,
			extract("options.extract", map[string]any{"minSdk": 26}),
		},
		Want:  App{Request: full, Project: project, Templates: android, Template: "android-compose", Options: sdk26, Files: files, Built: true},
		Calls: 6, Golden: "repaired",
	}}, {Scenario: magentest.Scenario[App]{
		Name:  "build recovered on the second attempt",
		Start: App{Request: full},
		Turns: []magentest.Turn{everything, pickCompose, extract("options.extract", map[string]any{"minSdk": 26}), fixed, fixed},
		Want: App{Request: full, Project: project, Templates: android, Template: "android-compose", Options: sdk26, Files: files,
			Attempts: 2, Fixes: []string{"added an import", "added an import"}, Built: true},
		Calls: 8, Golden: "recovered",
	}, failBuilds: 2}, {Scenario: magentest.Scenario[App]{
		Name:  "recovery exhausted ends in failure",
		Start: App{Request: full},
		Turns: []magentest.Turn{everything, pickCompose, extract("options.extract", map[string]any{"minSdk": 26}), fixed, fixed, fixed},
		Want: App{Request: full, Project: project, Templates: android, Template: "android-compose", Options: sdk26, Files: files,
			Attempts: 3, Fixes: []string{"added an import", "added an import", "added an import"},
			BuildLog: "e: MainActivity.kt:3:1 Unresolved reference: ComponentActivity (build 4)"},
		Status: magen.StatusFailed, Calls: 10,
	}, failBuilds: 99}}

	for _, r := range rows {
		t.Run(r.Name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // a fresh directory per row, named the same in every prompt
			dir := "out"
			start := r.Start.(App)
			start.OutputDir = dir
			r.Want.OutputDir = dir
			h := magentest.New(t, Graph(failingBuilder(r.failBuilds)), magen.WithToolID("mobile-app"), magen.WithTitle("Mobile app"), magen.WithPromptBuilder(Prompts{}))
			if err := RegisterTools(h.Orchestrator, h.Server); err != nil {
				t.Fatal(err)
			}
			out := h.Play(t, start, r.Turns...)
			magentest.CheckOutcome(t, r.Scenario, out)
			sizes := make([]string, len(out.Prompts))
			for i, p := range out.Prompts {
				sizes[i] = fmt.Sprint(len(p.Text))
			}
			t.Logf("%d tool calls; prompt sizes in bytes: %s", out.Calls, strings.Join(sizes, ", "))
		})
	}
}

func raw(s string) []byte { return []byte(s) }

func withRounds(s magen.InputState, n int) magen.InputState {
	s.Rounds = n
	return s
}

// TestGeneratedProject checks the files the generate step really writes.
func TestGeneratedProject(t *testing.T) {
	dir := t.TempDir()
	a := App{OutputDir: dir, Template: "android-compose", Project: magen.InputState{Values: magen.Values{
		"platform": raw(`"Android"`), "projectName": raw(`"Notes"`), "packageName": raw(`"com.acme.notes"`), "organization": raw(`"Acme"`)}}}
	a, err := generate(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	kt, err := os.ReadFile(filepath.Join(dir, "Notes/app/src/main/java/com/acme/notes/MainActivity.kt"))
	if err != nil || !strings.HasPrefix(string(kt), "package com.acme.notes\n") {
		t.Errorf("MainActivity.kt = %q, %v", kt, err)
	}
	if err := CheckBuild(context.Background(), dir, 1); err != nil {
		t.Errorf("CheckBuild on a fresh project = %v", err)
	}
	os.WriteFile(filepath.Join(dir, "Notes/app/src/main/java/com/acme/notes/MainActivity.kt"), []byte("pkg x\n"), 0o644)
	if err := CheckBuild(context.Background(), dir, 1); err == nil {
		t.Errorf("CheckBuild accepted a broken source file")
	}
}

// TestScriptedRun runs the command's own scripted LLM, as go run does.
func TestScriptedRun(t *testing.T) {
	h := magentest.New(t, Graph(failingBuilder(1)), magen.WithToolID("mobile-app"))
	if err := RegisterTools(h.Orchestrator, h.Server); err != nil {
		t.Fatal(err)
	}
	out, err := h.Run(context.Background(), App{Request: "Create an Android app called Field Notes for Acme Corp, package com.acme.fieldnotes, Compose, min SDK 26.",
		OutputDir: t.TempDir()}, magentest.NewLLMFunc(ScriptedLLM))
	if err != nil || out.Status != magen.StatusCompleted || out.State.Attempts != 1 {
		t.Errorf("scripted run = %s after %d calls (%d recoveries), %v", out.Status, out.Calls, out.State.Attempts, err)
	}
}
