package magen_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/magen-go/magen"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestProgress(t *testing.T) {
	received := make(chan mcp.JSONRPCNotification, 8)
	g := magen.NewGraph[docState]().
		AddNode("build", func(ctx context.Context, s docState) (docState, error) {
			magen.Progress(ctx, 1, 2, "compiling")
			select { // wait for delivery, so that the test is deterministic
			case <-received:
			case <-time.After(5 * time.Second):
				t.Error("no progress notification arrived")
			}
			return s, nil
		}).
		AddEdge(magen.Start, "build").AddEdge("build", magen.End)
	var logs bytes.Buffer
	o := mustNew(t, g, magen.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	c := mcpClient(t, o.Register)
	var got mcp.JSONRPCNotification
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			got = n
			received <- n
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("CallTool: %v %s", err, text(res))
	}
	f := got.Params.AdditionalFields
	if f["progressToken"] != "tok-1" || f["progress"] != float64(1) || f["total"] != float64(2) || f["message"] != "compiling" {
		t.Errorf("notification = %+v", f)
	}
	if strings.Contains(logs.String(), "msg=progress") {
		t.Errorf("progress was logged although it was sent:\n%s", logs.String())
	}

	// Without a progress token, progress is logged.
	logs.Reset()
	go func() { received <- mcp.JSONRPCNotification{} }()
	if _, err := o.Run(context.Background(), magen.Input{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "msg=progress node=build progress=1 total=2 message=compiling") {
		t.Errorf("progress was not logged:\n%s", logs.String())
	}
}
