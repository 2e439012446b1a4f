package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/argcount"
	"github.com/agenthost/agenthost/internal/fakemodel"
)

const onceConfig = `provider "fake" {
  base_url = "%s"
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
plugin "core" {
  source = "builtin:core"
  mount "w" {
    host  = "ws"
    guest = "/workspace"
  }
}
agent "main" {
  prompt  = "You read."
  default = true
  steps   = 3
  tools   = ["read_file"]
}
`

// TestArgumentsOnce: a tool call's arguments are decoded once and
// validated against the tool's schema once, whichever door the call comes
// in by: a run's call (loop, then the host's toolset and the plugin), a
// call of `mcp serve --tools` (CallTool) and a call that nobody checked
// (Toolset.Call, as a durable run's tool activity makes it). The counts
// are read around each call from internal/argcount, which the loop and
// the plugin package feed.
func TestArgumentsOnce(t *testing.T) {
	srv, err := fakemodel.Start([]fakemodel.Reply{
		{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a.txt"}`)}}},
		{Text: "done"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cfg := project(t, map[string]string{"agents.hcl": fmt.Sprintf(onceConfig, srv.URL()), "ws/a.txt": "one line\n"})
	ctx := context.Background()
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	t.Cleanup(func() { h.Close(ctx) })

	count := func(door string, call func() string) {
		t.Helper()
		d0, v0 := argcount.Counts()
		got := call()
		d1, v1 := argcount.Counts()
		if !strings.Contains(got, "one line") {
			t.Fatalf("%s: the call answered %q, want the file's line", door, got)
		}
		if d1-d0 != 1 || v1-v0 != 1 {
			t.Errorf("%s: arguments decoded %d times and validated %d times, want once each", door, d1-d0, v1-v0)
		}
	}
	count("a run's call", func() string {
		res, err := h.Run(ctx, RunRequest{Prompt: "Read a.txt."})
		if err != nil || len(res.Messages) < 3 {
			t.Fatalf("run: %v, %+v", err, res)
		}
		return res.Messages[len(res.Messages)-2].Content // the tool's answer
	})
	count("CallTool", func() string {
		res, err := h.CallTool(ctx, "read_file", `{"path":"a.txt"}`, "c1")
		if err != nil {
			t.Fatal(err)
		}
		return res.Content
	})
	count("Toolset.Call", func() string {
		res, err := h.Agent("main").Tools.Call(ctx, loopCall("read_file", `{"path":"a.txt"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res.Content
	})
	// One message for a tool there is not, whichever door: CallTool
	// offers every tool of the host, the agent's toolset its own.
	all := `unknown tool "read_files". Did you mean "read_file"? Available tools: edit, list_dir, read_file, search, write_file`
	if res, err := h.CallTool(ctx, "read_files", `{}`, "c2"); err != nil || !res.IsError || res.Content != all {
		t.Errorf("CallTool of an unknown tool: %+v, %v; want %q", res, err, all)
	}
	want := `unknown tool "read_files". Did you mean "read_file"? Available tools: read_file`
	if res, err := h.Agent("main").Tools.Call(ctx, loopCall("read_files", `{}`)); err != nil || !res.IsError || res.Content != want {
		t.Errorf("Toolset.Call of an unknown tool: %+v, %v; want %q", res, err, want)
	}
}
