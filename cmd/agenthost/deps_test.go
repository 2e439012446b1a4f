package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportPolicy enforces the layering of docs/architecture.md (config →
// host → loop → cmd) beyond package loop's own TestDeps: host/config never reaches the
// sandbox, the provider client, the loop, the host, nor the network (net/http, the
// registry client: it only parses and checks an oci:// source); the command line never
// imports wazero or go-openai itself, nor the testscript engine (the
// scenario runner of 'agenthost test' is internal/scenario); the scenario
// runner drives the agenthost executable from outside and never links the
// host, the loop or the sandbox; plugins is a leaf; prompts, defaults,
// toolname, redact, termtext, textcut, hostmem, bytesize and ociref, imported from several
// layers, depend on the standard library alone; the Temporal SDK is linked by host/temporal and
// the command line only; the HTML report (internal/report) reads events
// and never links the host, the sandbox or the provider client; the MCP
// HTTP server (host/mcpserve/httpserve) serves an mcpserve.Server and
// imports nothing else of ours; the terminal (cmd/agenthost/internal/term)
// draws the loop's questions and text and never links the host, the
// sandbox, the provider client or Temporal; what the runs command does
// (cmd/agenthost/internal/runs) parses no flags and reads no config; the
// prompt of run (cmd/agenthost/internal/prompt) depends on the standard
// library alone.
func TestImportPolicy(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	const mod = "github.com/agenthost/agenthost"
	list := func(format, pkg string) []string {
		out, err := exec.Command(gobin, "list", "-f", format, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	rules := []struct {
		pkg       string
		direct    bool // only direct imports, else every dependency
		forbidden []string
		stdlib    bool // every dependency is in the standard library
	}{
		// host/config only parses and checks a registry source
		// (internal/ociref); the registry client is host/plugin's.
		{"../../host/config", false, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", mod + "/loop", mod + "/host/plugin", mod + "/host/provider", mod + "/cmd", "go.opentelemetry.io", "oras.land", "github.com/opencontainers", "net/http"}, false},
		{".", true, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", "github.com/rogpeppe/go-internal", "go.opentelemetry.io"}, false},
		{"../../internal/scenario", false, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", "github.com/hashicorp/hcl", mod + "/host", mod + "/loop", mod + "/cmd", "go.opentelemetry.io"}, false},
		{"../../plugins", false, []string{mod + "/"}, false},
		// The Temporal SDK stays in host/temporal and the commands that use
		// it; the host and the loop never link it. (gRPC itself is linked by
		// the host for the OTLP/gRPC trace exporter of host/tracing.)
		{"../../host", false, []string{"go.temporal.io"}, false},
		{"../../internal/report", false, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", mod + "/host", mod + "/cmd", "go.temporal.io"}, false},
		{"./internal/term", false, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", mod + "/host", "go.temporal.io", "go.opentelemetry.io"}, false},
		{"./internal/prompt", false, nil, true},
		{"./internal/runs", true, []string{"github.com/tetratelabs/wazero", "github.com/sashabaranov/go-openai", "github.com/spf13", mod + "/host/config", mod + "/host/plugin", "go.opentelemetry.io"}, false},
		{"../../host/mcpserve/httpserve", true, []string{mod + "/host/plugin", mod + "/host/config", mod + "/host/provider", mod + "/loop", mod + "/internal", mod + "/cmd", "go.temporal.io"}, false},
		{"../../prompts", false, nil, true},
		{"../../internal/defaults", false, nil, true},
		{"../../internal/toolname", false, nil, true},
		{"../../internal/redact", false, nil, true},
		{"../../internal/termtext", false, nil, true},
		{"../../internal/textcut", false, nil, true},
		{"../../internal/hostmem", false, nil, true},
		{"../../internal/bytesize", false, nil, true},
		{"../../internal/wasmbin", false, nil, true},
		{"../../internal/sandbox", false, nil, true},
		{"../../internal/ociref", false, nil, true},
	}
	for _, r := range rules {
		format := `{{join .Deps " "}}`
		if r.direct {
			format = `{{join .Imports " "}}`
		}
		deps := list(format, r.pkg)
		if len(deps) == 0 {
			t.Fatalf("go list printed nothing for %s", r.pkg)
		}
		for _, d := range deps {
			if r.stdlib && strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				t.Errorf("%s depends on %s; it must depend on the standard library alone", r.pkg, d)
			}
			for _, f := range r.forbidden {
				if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
					t.Errorf("%s imports %s, which the import policy forbids", r.pkg, d)
				}
			}
		}
	}
}
