package mcpuse

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/npmtest"
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
	bin := npmtest.Install(t, "the npm MCP servers test", "servers-"+npmServersVersion,
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
