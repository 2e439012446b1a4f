package mcpuse

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// npmServersVersion is the release of the reference MCP servers the tests
// install from npm.
const npmServersVersion = "2026.8.31"

// TestNpmServers calls real MCP servers from npm, server-everything and
// server-filesystem, through Server. They are installed once into a cache
// directory ($AGENTHOST_NPM_CACHE, else the user's cache directory); the
// test is skipped, with a message, without Node and npm, with -short, or
// when npm cannot install them.
func TestNpmServers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test installs and runs MCP servers from npm")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the npm MCP servers test needs Node and npm (skipped)", tool)
		}
	}
	bin := installNpm(t, "servers-"+npmServersVersion,
		"@modelcontextprotocol/server-everything@"+npmServersVersion,
		"@modelcontextprotocol/server-filesystem@"+npmServersVersion)
	ctx := context.Background()

	t.Run("everything", func(t *testing.T) {
		s := New(Spec{Name: "everything", Command: []string{filepath.Join(bin, "mcp-server-everything")}, Tools: []string{"echo"}, Timeout: time.Minute}, zerolog.Nop())
		defer s.Close()
		tools, err := s.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 1 || tools[0].Name != "echo" || !strings.Contains(string(tools[0].InputSchema), "message") {
			t.Fatalf("tools = %+v", tools)
		}
		if r := call(t, s, "echo", `{"message":"hello MCP"}`); r.IsError || !strings.Contains(r.Content, "hello MCP") {
			t.Errorf("echo = %+v", r)
		}
	})

	t.Run("filesystem", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s := New(Spec{Name: "fs", Command: []string{filepath.Join(bin, "mcp-server-filesystem"), dir}, Tools: []string{"read_text_file", "list_directory"}, Timeout: time.Minute}, zerolog.Nop())
		defer s.Close()
		if _, err := s.Tools(ctx); err != nil {
			t.Fatal(err)
		}
		if r := call(t, s, "read_text_file", `{"path":"`+filepath.Join(dir, "notes.txt")+`"}`); r.IsError || !strings.Contains(r.Content, "remember the milk") {
			t.Errorf("read_text_file = %+v", r)
		}
		if r := call(t, s, "list_directory", `{"path":"`+dir+`"}`); r.IsError || !strings.Contains(r.Content, "notes.txt") {
			t.Errorf("list_directory = %+v", r)
		}
		// The server refuses paths outside its directory: an error result.
		if r := call(t, s, "read_text_file", `{"path":"/etc/hostname"}`); !r.IsError {
			t.Errorf("read_text_file outside = %+v", r)
		}
	})
}

// installNpm installs pkgs into the cache directory name (once) and
// returns its node_modules/.bin.
func installNpm(t *testing.T, name string, pkgs ...string) string {
	t.Helper()
	root := os.Getenv("AGENTHOST_NPM_CACHE")
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory for npm packages (%v): set AGENTHOST_NPM_CACHE", err)
		}
		root = filepath.Join(c, "agenthost-tests", "npm")
	}
	dir := filepath.Join(root, name)
	bin := filepath.Join(dir, "node_modules", ".bin")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside, then renamed into place: an install stopped midway
	// is never taken for a whole one.
	tmp, err := os.MkdirTemp(root, name+"-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--prefix", tmp}, pkgs...)
	if out, err := exec.CommandContext(ctx, "npm", args...).CombinedOutput(); err != nil {
		t.Skipf("cannot install %s with npm (skipped): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr == nil {
			return bin
		}
		t.Fatal(err)
	}
	return bin
}
