package magen

import (
	"context"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
)

// progressKey is the context key of the current call's progress sink.
type progressKey struct{}

type progressSink struct {
	srv   *server.MCPServer // nil outside an MCP call
	token any               // the client's progress token, nil if it asked for none
	log   *slog.Logger
}

// Progress reports how far a long-running node has come: progress out of
// total (0 if unknown), with a message. When the MCP client asked for
// progress on the call, it is sent as a notifications/progress message;
// otherwise it is logged at Info. Progress notifications are best-effort:
// a client may drop one, in particular the last one before a result, so
// never rely on them for anything but display.
func Progress(ctx context.Context, progress, total float64, message string) {
	sink, _ := ctx.Value(progressKey{}).(*progressSink)
	if sink == nil {
		return
	}
	if sink.srv != nil && sink.token != nil {
		params := map[string]any{"progressToken": sink.token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		if err := sink.srv.SendNotificationToClient(ctx, "notifications/progress", params); err == nil {
			return
		}
	}
	t, _ := ctx.Value(turnKey{}).(*turn)
	node := ""
	if t != nil {
		node = t.node
	}
	sink.log.InfoContext(ctx, "progress", "node", node, "progress", progress, "total", total, "message", message)
}

// withProgress returns ctx with a progress sink, unless it has one.
func withProgress(ctx context.Context, srv *server.MCPServer, token any, log *slog.Logger) context.Context {
	if ctx.Value(progressKey{}) != nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, &progressSink{srv: srv, token: token, log: log})
}
