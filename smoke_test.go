package magen_test

import (
	"testing"

	"github.com/magen-go/magen"
)

func TestSmoke(t *testing.T) {
	var n counters
	o, err := magen.New(docGraph(&n))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, o.Register)
	r := decode(t, callTool(t, c, magen.DefaultToolID, args(map[string]any{"topic": "Go"}, magen.StateData{})))
	t.Logf("%+v\n%s", r, r.Prompt)
	r = decode(t, callTool(t, c, magen.DefaultToolID, args(map[string]any{"text": "Go is fun"}, r.StateData)))
	t.Logf("%s", r.Prompt)
	res := callTool(t, c, magen.DefaultToolID, args(map[string]any{"approved": "yes"}, r.StateData))
	t.Logf("%v %s", res.IsError, text(res))
	r = decode(t, callTool(t, c, magen.DefaultToolID, args(map[string]any{"approved": true}, r.StateData)))
	t.Logf("%s", r.Prompt)
}
