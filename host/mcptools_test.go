package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/internal/mcptest"
)

// The test binary is also the MCP server of these tests (package
// internal/mcptest) when AGENTHOST_MCPTEST names a mode.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AGENTHOST_MCPTEST"); mode != "" {
		os.Exit(mcptest.Serve(mode))
	}
	os.Exit(m.Run())
}

// TestMCPToolsConcurrent: an agent's toolset routes SERVER__TOOL to the
// server under the tool's own name, concurrent calls get their own
// results, and after Close the server takes no more calls.
func TestMCPToolsConcurrent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := project(t, map[string]string{"agents.hcl": fmt.Sprintf(`provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
mcp_server "t" {
  command = [%q]
  env     = { AGENTHOST_MCPTEST = "tools" }
  tools   = ["echo", "fail"]
}
agent "a" {
  model = "m"
  tools = ["t__echo", "t__fail"]
}
`, exe)})
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	ts := h.Agent("a").Tools
	var names []string
	for _, s := range ts.Tools() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "t__echo,t__fail" {
		t.Errorf("tools = %v", names)
	}
	var wg sync.WaitGroup
	errs := make([]string, 16)
	for i := range 16 {
		wg.Go(func() {
			r, err := ts.Call(ctx, loopCall("t__echo", fmt.Sprintf(`{"text":"%d"}`, i)))
			if err != nil || r.IsError || r.Content != fmt.Sprintf(`echo: "text":"%d"`, i) {
				errs[i] = fmt.Sprintf("%+v %v", r, err)
			}
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("call %d: %s", i, e)
		}
	}
	if r, err := ts.Call(ctx, loopCall("t__fail", `{}`)); err != nil || !r.IsError || r.Content != "failed on purpose" {
		t.Errorf("t__fail: %+v %v", r, err)
	}
	// mcp serve --tools passes an MCP server's tools through CallTool.
	if r, err := h.CallTool(ctx, "t__echo", `{"text":"served"}`, "c1"); err != nil || r.IsError || r.Content != `echo: "text":"served"` {
		t.Errorf("CallTool t__echo: %+v %v", r, err)
	}
	if err := h.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}
	if r, err := ts.Call(ctx, loopCall("t__echo", `{"text":"late"}`)); err != nil || !r.IsError || !strings.Contains(r.Content, "closing") {
		t.Errorf("call after Close: %+v %v", r, err)
	}
}
