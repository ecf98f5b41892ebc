package magentest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// In a test binary, magentest defines the -update flag (rewrite golden
// files instead of comparing them), unless something loaded earlier has.
// A test package that imports magentest must not define its own -update:
// use Updating. Programs that are not tests get no flag.
func init() {
	if testing.Testing() && flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite magentest golden prompt files in testdata/")
	}
}

// Updating reports whether the test binary runs with -update.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// GoldenName is the file name of a prompt in a golden directory:
// "NN-node.md" for a task, "NN-node-tool.md" for the result of a delegated
// tool, "NN-node-rejected.md" for a tool error, and "NN-status.md" for the
// final message.
func GoldenName(p Prompt) string {
	switch {
	case p.Tool != "":
		return fmt.Sprintf("%02d-%s-%s.md", p.Call, safe(p.Node()), safe(p.Tool))
	case p.IsError:
		return fmt.Sprintf("%02d-%s-rejected.md", p.Call, safe(p.Node()))
	case p.Task != nil:
		return fmt.Sprintf("%02d-%s.md", p.Call, safe(p.Node()))
	default:
		return fmt.Sprintf("%02d-%s.md", p.Call, safe(string(p.Status)))
	}
}

func safe(s string) string {
	if s == "" {
		return "none"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// CheckGolden compares prompts with the files in dir, one per prompt (see
// GoldenName). With update it rewrites dir to match instead. It reports
// every stale, missing or extra file, joined, each with a diff.
func CheckGolden(dir string, prompts []Prompt, update bool) error {
	want := map[string]string{}
	for _, p := range prompts {
		want[GoldenName(p)] = p.Text
	}
	if update {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	var errs []error
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			errs = append(errs, fmt.Errorf("%s: golden file for a prompt the run no longer produces; run go test -update", filepath.Join(dir, e.Name())))
		}
	}
	for _, p := range prompts {
		name := GoldenName(p)
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: missing golden file; run go test -update", path))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if string(b) != p.Text {
			errs = append(errs, fmt.Errorf("%s is stale; review the diff (-want +got), then run go test -update:\n%s", path, cmp.Diff(string(b), p.Text)))
		}
	}
	return errors.Join(errs...)
}
