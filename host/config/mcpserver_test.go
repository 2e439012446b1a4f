package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/defaults"
)

func TestMCPServerDecoded(t *testing.T) {
	src := base + `mcp_server "fs" {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./workspace"]
  env     = { DEBUG = "0" }
  tools   = ["read_text_file", "list_directory"]
  timeout = "5s"
  max_output = "64KiB"
}
mcp_server "web" {
  url     = "http://127.0.0.1:9000/mcp"
  headers = { Authorization = "Bearer x" }
}
agent "a" {
  model = "m"
  tools = ["fs__read_text_file"]
}
`
	cfg, diags := parseIn(t, src, nil)
	if diags.HasErrors() {
		t.Fatalf("diagnostics:%s", dump(diags))
	}
	if len(cfg.MCPServers) != 2 {
		t.Fatalf("MCPServers = %d, want 2", len(cfg.MCPServers))
	}
	fs, web := cfg.MCPServers[0], cfg.MCPServers[1]
	if fs.Name != "fs" || len(fs.Command) != 4 || fs.Env["DEBUG"] != "0" || fs.Timeout != 5*time.Second || fs.MaxOutput != 64<<10 ||
		!slices.Equal(fs.Tools, []string{"read_text_file", "list_directory"}) || fs.URL != "" {
		t.Errorf("fs = %+v", fs)
	}
	if web.URL != "http://127.0.0.1:9000/mcp" || web.Headers["Authorization"] != "Bearer x" ||
		web.Timeout != DefaultMCPTimeout || web.MaxOutput != defaults.MCPMaxOutput || web.Tools != nil || web.Command != nil {
		t.Errorf("web = %+v", web)
	}
	if got := fs.ToolName("read_text_file"); got != "fs__read_text_file" {
		t.Errorf("ToolName = %q", got)
	}
}

// TestMCPServerRules: each case has one problem and wants one located
// error with a hint.
func TestMCPServerRules(t *testing.T) {
	tests := []struct {
		name, src, summary, detail, at string
	}{
		{"neither", "mcp_server \"s\" {\n}\n", "Missing command or url", "needs command", "3:1"},
		{"both", "mcp_server \"s\" {\n  command = [\"x\"]\n  url = \"http://h/mcp\"\n}\n", "Both command and url", "not both", "5:9"},
		{"empty command", "mcp_server \"s\" {\n  command = []\n}\n", "Empty command", "program and its arguments", "4:13"},
		{"bad url", "mcp_server \"s\" {\n  url = \"ftp://h/mcp\"\n}\n", "Invalid url", "http:// or https://", "4:9"},
		{"bad timeout", "mcp_server \"s\" {\n  command = [\"x\"]\n  timeout = \"soon\"\n}\n", "Invalid duration", "timeout", "5:13"},
		{"max_output zero", "mcp_server \"s\" {\n  command = [\"x\"]\n  max_output = \"0\"\n}\n", "Invalid max_output", "from 1 byte to 1GiB", "5:16"},
		{"max_output too big", "mcp_server \"s\" {\n  command = [\"x\"]\n  max_output = \"2GiB\"\n}\n", "Invalid max_output", "from 1 byte to 1GiB", "5:16"},
		{"max_output not a size", "mcp_server \"s\" {\n  command = [\"x\"]\n  max_output = \"lots\"\n}\n", "Invalid size", "max_output", "5:16"},
		{"bad url with credentials", "mcp_server \"s\" {\n  url = \"ftp://alice:pw1234@h/mcp?api_key=SECRET\"\n}\n", "Invalid url", "got \"ftp://REDACTED@h/mcp?api_key=REDACTED\"", "4:9"},
		{"bad name", "mcp_server \"my.fs\" {\n  command = [\"x\"]\n}\n", "Invalid MCP server name", "__TOOL", "3:12"},
		{"double underscore name", "mcp_server \"a__b\" {\n  command = [\"x\"]\n}\n", "Invalid MCP server name", "no \"__\"", "3:12"},
		{"bad tool name", "mcp_server \"s\" {\n  command = [\"x\"]\n  tools = [\"a.b\"]\n}\n", "Invalid MCP tool name", "s__a.b", "5:12"},
		{"duplicate tool", "mcp_server \"s\" {\n  command = [\"x\"]\n  tools = [\"a\", \"a\"]\n}\n", "Duplicate tool", "already listed", "5:17"},
		{"headers with command", "mcp_server \"s\" {\n  command = [\"x\"]\n  headers = { A = \"b\" }\n}\n", "headers without url", "env", "5:13"},
		{"env with url", "mcp_server \"s\" {\n  url = \"http://h/mcp\"\n  env = { A = \"b\" }\n}\n", "env without command", "headers", "3:1"},
		{"duplicate server", "mcp_server \"s\" {\n  command = [\"x\"]\n}\nmcp_server \"s\" {\n  command = [\"y\"]\n}\n", "Duplicate plugin or MCP server name", "line 3", "6:12"},
		{"same name as plugin", "plugin \"s\" {\n  source = \"builtin:core\"\n}\nmcp_server \"s\" {\n  command = [\"y\"]\n}\n", "Duplicate plugin or MCP server name", "share one set of names", "6:12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := parseIn(t, base+tt.src+"agent \"a\" {\n  model = \"m\"\n}\n", nil)
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("want one error, got:%s", dump(diags))
			}
			var d *hcl.Diagnostic
			for _, x := range diags {
				if x.Severity == hcl.DiagError {
					d = x
				}
			}
			if d.Summary != tt.summary || !strings.Contains(d.Detail, tt.detail) || pos(d) != tt.at {
				t.Errorf("got %s %s | %s; want %s %s | ...%s...", pos(d), d.Summary, d.Detail, tt.at, tt.summary, tt.detail)
			}
		})
	}
}
