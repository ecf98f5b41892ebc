package magen

import (
	"io"
	"log/slog"
	"time"

	"github.com/lmittmann/tint"
)

// NewConsoleHandler returns a colourful, human-readable slog handler for
// examples and command-line tools, built on github.com/lmittmann/tint.
// Give it os.Stderr: on an MCP stdio server, stdout is the transport and
// must carry nothing else.
func NewConsoleHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return tint.NewHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly})
}
