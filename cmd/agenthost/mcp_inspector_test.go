package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/npmtest"
)

// inspectorVersion is the MCP Inspector whose CLI TestMCPInspectorCLI runs:
// the last one that installs on Node 20.
const inspectorVersion = "0.15.0"

// TestMCPInspectorCLI runs the official MCP Inspector's CLI against
// 'agenthost mcp serve' over stdio: tools/list and tools/call of a plugin
// tool (a result and an error result) and of a served agent. It needs Node
// and npm, and installs the Inspector once into a cache directory
// ($AGENTHOST_NPM_CACHE, else the user's cache directory); without them it
// is skipped with a message.
func TestMCPInspectorCLI(t *testing.T) {
	bin := filepath.Join(npmtest.Install(t, "the MCP Inspector CLI test", "inspector-"+inspectorVersion,
		"@modelcontextprotocol/inspector@"+inspectorVersion), "mcp-inspector")
	agenthost, err := exec.LookPath("agenthost") // this test binary, put in $PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	replies, err := fakemodel.ParseScript([]byte(`{"text": "Hello from the agent."}`))
	if err != nil {
		t.Fatal(err)
	}
	fm, err := fakemodel.Start(replies)
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()

	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "files", "notes.txt"), "remember the milk\n")
	writeFile(t, filepath.Join(work, "agents.hcl"), `provider "fake" {
  base_url = env("OPENAI_BASE_URL")
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
plugin "core" {
  source = "builtin:core"
  mount "files" {
    host  = "files"
    guest = "/files"
    mode  = "ro"
  }
}
agent "main" {
  description = "Reads notes."
  model       = "m"
  tools       = ["read_file"]
}
`)
	inspect := func(serve []string, method ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append([]string{"--cli", agenthost, "mcp", "serve", "-c", "agents.hcl"}, serve...)
		cmd := exec.CommandContext(ctx, bin, append(args, method...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+fm.URL())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mcp-inspector %s: %v\nstdout: %s\nstderr: %s", strings.Join(method, " "), err, out, stderr.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("mcp-inspector %s printed no JSON object: %v\n%s", strings.Join(method, " "), err, out)
		}
		return v
	}

	list := inspect([]string{"-a", "main", "--tools", "--agents"}, "--method", "tools/list")
	tools := map[string]map[string]any{}
	for _, tl := range list["tools"].([]any) {
		m := tl.(map[string]any)
		tools[m["name"].(string)] = m
	}
	if len(tools) != 2 || tools["read_file"] == nil || tools["main"] == nil {
		t.Fatalf("tools/list: want read_file and main, got %v", list)
	}
	if req, _ := json.Marshal(tools["read_file"]["inputSchema"].(map[string]any)["required"]); string(req) != `["path"]` {
		t.Errorf("read_file's input schema: required = %s, want [\"path\"]", req)
	}
	if d := tools["main"]["description"]; d != "Reads notes." {
		t.Errorf("agent main's description = %v", d)
	}

	res := inspect(nil, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=notes.txt")
	if text := firstText(t, res); !strings.Contains(text, "remember the milk") || res["isError"] == true {
		t.Errorf("read_file notes.txt: %v", res)
	}
	res = inspect(nil, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/etc/passwd")
	if text := firstText(t, res); res["isError"] != true || !strings.Contains(text, "outside /files") {
		t.Errorf("read_file /etc/passwd: want an error result saying it is outside the mount, got %v", res)
	}
	res = inspect([]string{"--agents"}, "--method", "tools/call", "--tool-name", "main", "--tool-arg", "prompt=Say hello.")
	sc, _ := res["structuredContent"].(map[string]any)
	if firstText(t, res) != "Hello from the agent." || sc["stop_reason"] != "completed" || sc["steps"] != float64(1) || res["isError"] == true {
		t.Errorf("agent main: %v", res)
	}
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content in %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
