package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MaxRecoveries bounds the build-recovery attempts.
const MaxRecoveries = 3

// App is the workflow's state.
type App struct {
	Request   string           `json:"request"`             // the user's first message
	OutputDir string           `json:"outputDir,omitempty"` // where to generate; a temp dir if empty
	Project   magen.InputState `json:"project"`             // platform, projectName, packageName, organization
	Templates []Template       `json:"templates,omitempty"` // the candidates for the platform
	Template  string           `json:"template,omitempty"`  // the chosen template's id
	Options   magen.InputState `json:"options"`             // the chosen template's own properties
	Files     []string         `json:"files,omitempty"`     // generated files, relative to OutputDir
	BuildLog  string           `json:"buildLog,omitempty"`  // the last failed build's output
	Attempts  int              `json:"attempts,omitempty"`  // recovery attempts so far
	Fixes     []string         `json:"fixes,omitempty"`     // what each recovery changed
	Built     bool             `json:"built,omitempty"`
}

// Project is the typed view of the project properties.
type Project struct {
	Platform     string `json:"platform"`
	ProjectName  string `json:"projectName"`
	PackageName  string `json:"packageName"`
	Organization string `json:"organization"`
}

// Template is a project template.
type Template struct {
	ID          string `json:"id"`
	Platform    string `json:"platform"`
	Description string `json:"description"`
	// Properties are the template's own inputs.
	Properties []magen.Property `json:"-"`
}

var projectProps = []magen.Property{
	{Name: "platform", FriendlyName: "platform", Description: "the mobile platform: iOS or Android",
		Schema: json.RawMessage(`{"type":"string","enum":["iOS","Android"]}`)},
	magen.PropertyOf[string]("projectName", "project name", "the app's name, such as Field Notes"),
	{Name: "packageName", FriendlyName: "package name", Description: "the reverse-DNS package or bundle id, such as com.acme.fieldnotes",
		Schema: json.RawMessage(`{"type":"string","pattern":"^[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)+$"}`)},
	magen.PropertyOf[string]("organization", "organization", "the company or team that publishes the app"),
}

// catalog is the fixed list of templates the fetch step returns.
var catalog = []Template{
	{ID: "ios-swiftui", Platform: "iOS", Description: "a SwiftUI app with a tab bar",
		Properties: []magen.Property{{Name: "minimumIOS", FriendlyName: "minimum iOS version", Description: "the oldest iOS version to support, such as 17.0",
			Schema: json.RawMessage(`{"type":"string","pattern":"^1[5-9]\\.[0-9]$"}`)}}},
	{ID: "android-compose", Platform: "Android", Description: "a Jetpack Compose app with navigation",
		Properties: []magen.Property{{Name: "minSdk", FriendlyName: "minimum SDK", Description: "the lowest Android API level to support, 24 to 35",
			Schema: json.RawMessage(`{"type":"integer","minimum":24,"maximum":35}`)}}},
	{ID: "android-views", Platform: "Android", Description: "a classic Android Views app",
		Properties: []magen.Property{{Name: "minSdk", FriendlyName: "minimum SDK", Description: "the lowest Android API level to support, 21 to 35",
			Schema: json.RawMessage(`{"type":"integer","minimum":21,"maximum":35}`)}}},
}

func templateByID(id string) (Template, bool) {
	i := slices.IndexFunc(catalog, func(t Template) bool { return t.ID == id })
	if i < 0 {
		return Template{}, false
	}
	return catalog[i], true
}

// Builder builds the generated project in dir. attempt counts from 1. Tests
// inject one that fails.
type Builder func(ctx context.Context, dir string, attempt int) error

// Recovery is what the LLM reports after the build-recovery tool's task.
type Recovery struct {
	Fixed   bool   `json:"fixed" jsonschema:"true if you changed the project so that the build should pass"`
	Summary string `json:"summary" jsonschema:"what you changed, in one sentence"`
}

// Graph builds the mobile-app workflow.
func Graph(build Builder) *magen.Graph[App] {
	if build == nil {
		build = CheckBuild
	}
	project := magen.Inputs[App]{
		Name:       "project",
		Properties: projectProps,
		State:      func(a *App) *magen.InputState { return &a.Project },
		Source:     func(a App) string { return a.Request },
		Next:       "fetchTemplates",
	}
	options := magen.Inputs[App]{
		Name: "options",
		PropertiesOf: func(a App) []magen.Property {
			t, _ := templateByID(a.Template)
			return t.Properties
		},
		State:  func(a *App) *magen.InputState { return &a.Options },
		Source: func(a App) string { return a.Request },
		Next:   "generate",
	}
	g := magen.NewGraph[App]().
		AddNode("fetchTemplates", fetchTemplates).
		AddNode("selectTemplate", selectTemplate).
		AddNode("generate", generate).
		AddNode("build", func(ctx context.Context, a App) (App, error) {
			magen.Progress(ctx, 0, 2, "building "+a.Template)
			if err := build(ctx, a.OutputDir, a.Attempts+1); err != nil {
				a.BuildLog, a.Built = err.Error(), false
				return a, nil
			}
			magen.Progress(ctx, 1, 2, "build passed")
			a.BuildLog, a.Built = "", true
			return a, nil
		}).
		AddNode("recover", recoverBuild).
		AddNode("finish", func(ctx context.Context, a App) (App, error) { return a, nil }).
		AddNode("failure", func(ctx context.Context, a App) (App, error) {
			return a, fmt.Errorf("the build still fails after %d recovery attempts: %s", a.Attempts, a.BuildLog)
		}).
		AddEdge(magen.Start, project.Entry()).
		AddEdge("fetchTemplates", "selectTemplate").
		AddEdge("selectTemplate", options.Entry()).
		AddEdge("generate", "build").
		AddRoute("build", func(a App) string {
			switch {
			case a.Built:
				return "passed"
			case a.Attempts < MaxRecoveries:
				return "failed"
			default:
				return "exhausted"
			}
		}, magen.Routes{"passed": "finish", "failed": "recover", "exhausted": "failure"}).
		AddEdge("recover", "build").
		AddEdge("finish", magen.End).
		AddEdge("failure", magen.End)
	project.AddTo(g)
	options.AddTo(g)
	return g
}

func fetchTemplates(ctx context.Context, a App) (App, error) {
	var p Project
	if err := a.Project.Values.Decode(&p); err != nil {
		return a, err
	}
	a.Templates = nil
	for _, t := range catalog {
		if t.Platform == p.Platform {
			a.Templates = append(a.Templates, t)
		}
	}
	if len(a.Templates) == 0 {
		return a, fmt.Errorf("no templates for platform %q", p.Platform)
	}
	return a, nil
}

func selectTemplate(ctx context.Context, a App) (App, error) {
	if len(a.Templates) == 1 {
		a.Template = a.Templates[0].ID // nothing to choose: no round trip
		return a, nil
	}
	choices := make([]magen.Choice, len(a.Templates))
	for i, t := range a.Templates {
		choices[i] = magen.Choice{ID: t.ID, Description: t.Description}
	}
	sel, err := magen.Select(ctx, magen.Template{
		Task:    "Choose the project template that best fits the user's request.",
		Context: []string{"The user's request:\n\n> " + a.Request},
	}, choices)
	if err != nil {
		return a, err
	}
	a.Template = sel.ID
	return a, nil
}

// generate writes the project files.
func generate(ctx context.Context, a App) (App, error) {
	var p Project
	if err := a.Project.Values.Decode(&p); err != nil {
		return a, err
	}
	if a.OutputDir == "" {
		dir, err := os.MkdirTemp("", "mobileapp-*")
		if err != nil {
			return a, err
		}
		a.OutputDir = dir
	}
	root := filepath.Join(a.OutputDir, p.ProjectName)
	manifest := map[string]any{"name": p.ProjectName, "package": p.PackageName, "organization": p.Organization,
		"platform": p.Platform, "template": a.Template, "options": a.Options.Values}
	mb, _ := json.MarshalIndent(manifest, "", "  ")
	files := map[string]string{
		"app.json":  string(mb) + "\n",
		"README.md": fmt.Sprintf("# %s\n\nA %s app by %s, from the %s template.\n", p.ProjectName, p.Platform, p.Organization, a.Template),
	}
	if p.Platform == "iOS" {
		files["Sources/App.swift"] = fmt.Sprintf("import SwiftUI\n\n@main\nstruct App: SwiftUI.App {\n    var body: some Scene { WindowGroup { Text(%q) } }\n}\n", p.ProjectName)
	} else {
		files["app/src/main/java/"+strings.ReplaceAll(p.PackageName, ".", "/")+"/MainActivity.kt"] =
			fmt.Sprintf("package %s\n\nclass MainActivity : ComponentActivity()\n", p.PackageName)
	}
	a.Files = a.Files[:0]
	for name, body := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return a, err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return a, err
		}
		a.Files = append(a.Files, filepath.Join(p.ProjectName, name))
	}
	slices.Sort(a.Files)
	a.OutputDir = filepath.Clean(a.OutputDir)
	return a, nil
}

var validPackage = regexp.MustCompile(`^package [a-z][a-z0-9]*(\.[a-z][a-z0-9]*)+$`)

// CheckBuild is the default Builder: it checks that the generated project
// is complete and consistent, as a compiler's first pass would.
func CheckBuild(ctx context.Context, dir string, attempt int) error {
	manifests, _ := filepath.Glob(filepath.Join(dir, "*", "app.json"))
	if len(manifests) != 1 {
		return fmt.Errorf("expected one app.json under %s, found %d", dir, len(manifests))
	}
	var m struct {
		Package, Platform string
	}
	b, err := os.ReadFile(manifests[0])
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("app.json: %w", err)
	}
	if m.Platform == "Android" {
		src := filepath.Join(filepath.Dir(manifests[0]), "app/src/main/java", strings.ReplaceAll(m.Package, ".", "/"), "MainActivity.kt")
		code, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("MainActivity.kt: %w", err)
		}
		if first, _, _ := strings.Cut(string(code), "\n"); !validPackage.MatchString(first) {
			return errors.New("MainActivity.kt: bad package declaration")
		}
	}
	return nil
}

// recoverBuild delegates the fix to the build-recovery tool.
func recoverBuild(ctx context.Context, a App) (App, error) {
	out, err := magen.Delegate[Recovery](ctx, magen.Delegation{
		Tool:  RecoveryTool,
		Input: map[string]any{"projectDir": a.OutputDir, "buildLog": a.BuildLog, "attempt": a.Attempts + 1},
		Note:  fmt.Sprintf("The build failed (recovery attempt %d of %d).", a.Attempts+1, MaxRecoveries),
	})
	if err != nil {
		return a, err
	}
	a.Attempts++
	a.Fixes = append(a.Fixes, out.Summary)
	return a, nil
}

// RecoveryTool is the name of the delegated build-recovery tool.
const RecoveryTool = "mobile-build-recovery"

// RegisterTools adds the build-recovery tool that o delegates to.
func RegisterTools(o *magen.Orchestrator[App], s *server.MCPServer) error {
	return o.RegisterWorkflowTool(s, mcp.NewTool(RecoveryTool,
		mcp.WithDescription("Guides the fix of a failed mobile app build. Called by the mobile-app workflow."),
		mcp.WithString("projectDir", mcp.Required(), mcp.Description("the generated project's directory")),
		mcp.WithString("buildLog", mcp.Required(), mcp.Description("the failed build's output")),
		mcp.WithNumber("attempt", mcp.Description("which recovery attempt this is")),
	), func(ctx context.Context, args map[string]any) (string, error) {
		return magen.Template{
			Role: "a mobile build engineer",
			Task: "Fix the failed build of the generated project.",
			Context: []string{
				fmt.Sprintf("Project directory: `%v`", args["projectDir"]),
				fmt.Sprintf("Build output:\n\n```\n%v\n```", args["buildLog"]),
			},
			Instructions: []string{
				"Read the build output and find the cause.",
				"Change the project files to fix it; change nothing unrelated.",
				"If you cannot fix it, say so with fixed: false.",
			},
		}.Text(), nil
	})
}

// Prompts replaces the completion message, so that the LLM can tell the
// user where the project is; the other prompts are magen's defaults.
type Prompts struct{ magen.DefaultPrompts }

// Completed implements magen.PromptBuilder.
func (Prompts) Completed(p magen.PromptContext) string {
	var a App
	if err := json.Unmarshal(p.State, &a); err != nil || len(a.Files) == 0 {
		return magen.DefaultPrompts{}.Completed(p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Workflow complete\n\nThe project was generated from the `%s` template and builds. Tell the user it is ready in `%s`, with these files:\n\n", a.Template, a.OutputDir)
	for _, f := range a.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	if len(a.Fixes) > 0 {
		fmt.Fprintf(&b, "\nThe build needed %d fix(es): %s.\n", len(a.Fixes), strings.Join(a.Fixes, "; "))
	}
	fmt.Fprintf(&b, "\nThere is nothing more to do: do not call `%s` again for this workflow.\n", p.ToolID)
	return b.String()
}
