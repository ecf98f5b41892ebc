package magen

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lmittmann/tint"
)

// NewConsoleHandler returns a colourful, human-readable slog handler for
// examples and command-line tools, built on github.com/lmittmann/tint.
// Give it os.Stderr: on an MCP stdio server, stdout is the transport and
// must carry nothing else. Colours are used only when w is a terminal.
func NewConsoleHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return tint.NewHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly, NoColor: !isTerminal(w)})
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// openLog opens the default log: JSON lines appended to path, at the level
// LOG_LEVEL names. The directory is created 0700 and the file 0600.
func openLog(path string) (*slog.Logger, *os.File, error) {
	var level slog.Level
	if v := strings.TrimSpace(os.Getenv("LOG_LEVEL")); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, nil, fmt.Errorf("magen: LOG_LEVEL=%q: want debug, info, warn or error", v)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("magen: open log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("magen: open log: %w", err)
	}
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: level})), f, nil
}
