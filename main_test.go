package magen_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points the default .magen directory at a temporary one, so that
// tests that use the default SQLite store and log file never touch the
// home directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "magen-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("PROJECT_PATH", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
