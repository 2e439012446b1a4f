package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/loop"
)

// project writes files into a temp dir and loads its agents.hcl.
func project(t *testing.T, files map[string]string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := config.Load(filepath.Join(dir, "agents.hcl"), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

const configTemplate = `provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
plugin "core" {
  source = "builtin:core"
  mount "w" {
    host  = "%s"
    guest = "/workspace"
    mode  = "rw"
  }
}
agent "a" {
  prompt = file("prompts/a.md")
  description = file("notes/d.txt")
  tools  = ["read_file"]
}
`

// TestProtected: the protected set names every file of the host's own.
func TestProtected(t *testing.T) {
	cfg := project(t, map[string]string{
		"agents.hcl":   strings.Replace(configTemplate, "%s", ".", 1),
		"prompts/a.md": "A", "notes/d.txt": "D",
	})
	exe, _ := os.Executable()
	ps := Protected(cfg, "/var/cache/ah", Options{Record: "rec.jsonl", Replay: "/tmp/play.jsonl"})
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
		if p.What == "" {
			t.Errorf("%s: no description", p.Path)
		}
	}
	cwd, _ := os.Getwd()
	for _, want := range []string{
		cfg.Host.DataDir, cfg.File, filepath.Join(cfg.Dir, "prompts"), "/var/cache/ah",
		filepath.Join(cfg.Dir, "prompts", "a.md"), filepath.Join(cfg.Dir, "notes", "d.txt"),
		filepath.Join(cwd, "rec.jsonl"), "/tmp/play.jsonl", exe,
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("protected set lacks %s: %q", want, paths)
		}
	}
}

// TestNewProtectsDataDir: New creates data_dir before mounting, so a mount
// of the project directory is guarded from the start, and refuses a mount
// inside data_dir.
func TestNewProtectsDataDir(t *testing.T) {
	ctx := context.Background()
	cfg := project(t, map[string]string{
		"agents.hcl":   strings.Replace(configTemplate, "%s", ".", 1),
		"prompts/a.md": "A", "notes/d.txt": "D",
	})
	if _, err := os.Stat(cfg.Host.DataDir); err == nil {
		t.Fatal("data_dir exists before New")
	}
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	defer h.Close(ctx)
	if fi, err := os.Stat(cfg.Host.DataDir); err != nil || !fi.IsDir() {
		t.Errorf("data_dir after New: %v", err)
	}
	res, err := h.Plugins[0].Call(ctx, loopCall("read_file", `{"path": "agents.hcl"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "ermission denied") {
		t.Errorf("read_file agents.hcl through the mount: %+v, %v", res, err)
	}

	cfg = project(t, map[string]string{
		"agents.hcl":        strings.Replace(configTemplate, "%s", ".agenthost/work", 1),
		".agenthost/work/x": "x", "prompts/a.md": "A", "notes/d.txt": "D",
	})
	_, diags, err = New(ctx, cfg, Options{NoCache: true})
	if err != nil || !diags.HasErrors() || !strings.Contains(diags.Error(), "the mount lies inside the data directory (data_dir)") {
		t.Errorf("mount inside data_dir: %v, %v", diags, err)
	}
}

func loopCall(name, args string) loop.ToolCall {
	return loop.ToolCall{ID: "t", Name: name, Arguments: args}
}

// TestAgentToolsAreItsOwn: an agent is offered the tools it names and no
// other, whether it names some, none (tools = []) or leaves tools out;
// the host's own set (CallTool) has every tool.
func TestAgentToolsAreItsOwn(t *testing.T) {
	ctx := context.Background()
	cfg := project(t, map[string]string{
		"agents.hcl": strings.Replace(configTemplate, "%s", ".", 1) + `
agent "none" {
  tools = []
}
agent "unset" {
}
`,
		"prompts/a.md": "A", "notes/d.txt": "D",
	})
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	defer h.Close(ctx)
	names := func(agent string) []string {
		var out []string
		for _, s := range h.Agent(agent).Tools.Tools() {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names("a"); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("agent a offered %v, want [read_file]", got)
	}
	for _, agent := range []string{"none", "unset"} {
		if got := names(agent); len(got) != 0 {
			t.Errorf("agent %s names no tool but is offered %v", agent, got)
		}
	}
	if n := len(h.all.Tools()); n < 2 {
		t.Errorf("the host's set has %d tools, want every tool of core", n)
	}
}
