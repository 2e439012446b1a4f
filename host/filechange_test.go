package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/loop"
)

const changeConfig = `provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
  name     = "fake-model"
}
plugin "files" {
  source      = "builtin:core"
  tool_prefix = "fs_"
  mount "w" {
    host  = "ws"
    guest = "/workspace"
    mode  = "rw"
  }
  mount "d" {
    host  = "data"
    guest = "/data"
    mode  = "ro"
  }
}
agent "main" {
  prompt  = "You edit."
  default = true
  tools   = ["fs_write_file", "fs_edit", "fs_read_file"]
}
`

// TestFileChange: what a write_file or edit of the core plugin would do
// to a file, read through the plugin's mounts (relative paths at the first
// mount, absolute ones in any, under tool_prefix); nothing for a file it
// must not read or cannot diff, so that the question shows the arguments.
func TestFileChange(t *testing.T) {
	cfg := project(t, map[string]string{"agents.hcl": changeConfig, "ws/a.txt": "one\ntwo\n", "data/d.txt": "x\n", "outside.txt": "secret\n"})
	ctx := context.Background()
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	t.Cleanup(func() { h.Close(ctx) })
	ws := filepath.Join(filepath.Dir(cfg.File), "ws")
	if err := os.Symlink("../outside.txt", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), make([]byte, callview.MaxDiffBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(name, args string) loop.ToolCall { return loop.ToolCall{ID: "c", Name: name, Arguments: args} }
	for _, tc := range []struct {
		call   loop.ToolCall
		ok     bool
		exists bool
		old    string
		new    string
	}{
		{call("fs_write_file", `{"path":"a.txt","content":"1\n"}`), true, true, "one\ntwo\n", "1\n"},
		{call("fs_write_file", `{"path":"/workspace/sub/../a.txt","content":"1\n"}`), true, true, "one\ntwo\n", "1\n"},
		{call("fs_write_file", `{"path":"new.txt","content":"n\n"}`), true, false, "", "n\n"},
		{call("fs_write_file", `{"path":"/data/d.txt","content":"y\n"}`), true, true, "x\n", "y\n"},
		{call("fs_edit", `{"path":"a.txt","old_string":"two","new_string":"2"}`), true, true, "one\ntwo\n", "one\n2\n"},
		{call("fs_edit", `{"path":"a.txt","old_string":"three","new_string":"3"}`), false, false, "", ""}, // no match: the call fails
		{call("fs_edit", `{"path":"a.txt","old_string":"o","new_string":"0"}`), false, false, "", ""},     // twice
		{call("fs_write_file", `{"path":"../outside.txt","content":"x"}`), false, false, "", ""},          // under no mount
		{call("fs_write_file", `{"path":"/etc/passwd","content":"x"}`), false, false, "", ""},
		{call("fs_write_file", `{"path":"link.txt","content":"x"}`), false, false, "", ""}, // a link out of the mount
		{call("fs_write_file", `{"path":"fifo","content":"x"}`), false, false, "", ""},     // not a regular file: not opened
		{call("fs_write_file", `{"path":"big.txt","content":"x"}`), false, false, "", ""},  // over MaxDiffBytes
		{call("fs_read_file", `{"path":"a.txt"}`), false, false, "", ""},
		{call("write_file", `{"path":"a.txt","content":"x"}`), false, false, "", ""}, // not this host's name
	} {
		ch, ok := h.FileChange(tc.call)
		if ok != tc.ok || ch.Exists != tc.exists || string(ch.Old) != tc.old || string(ch.New) != tc.new {
			t.Errorf("%s %s: got %v %+v, want %v exists %v old %q new %q", tc.call.Name, tc.call.Arguments, ok, ch, tc.ok, tc.exists, tc.old, tc.new)
		}
		if strings.Contains(string(ch.Old), "secret") {
			t.Errorf("%s: read a file outside the mounts", tc.call.Arguments)
		}
	}
}
