package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/loop"
)

// TestPluginSpec: a plugin block becomes the Spec the sandbox loads, and a
// tool block's argv and stdin become its command line, evaluated per call.
func TestPluginSpec(t *testing.T) {
	cfg := project(t, map[string]string{
		"agents.hcl": `
provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
plugin "jq" {
  source = "jq.wasm"
  env    = { A = "1" }
  clock  = true
  limits {
    timeout   = "5s"
    max_files = 7
  }
  mount "data" {
    host  = "data"
    guest = "/data"
  }
  mount "out" {
    host  = "out"
    guest = "/out"
    mode  = "rw"
  }
  tool "jq" {
    description  = "runs jq"
    input_schema = { type = "object", properties = { filter = { type = "string" } } }
    argv         = ["jq", "-c", args.filter]
    stdin        = "{}"
  }
}
agent "a" {
  tools = ["jq"]
}
`,
		"jq.wasm": "\x00asm\x01\x00\x00\x00", "data/x": "", "out/x": "",
	})
	got := pluginSpec(cfg.Plugins[0])
	dir := cfg.Dir
	want := plugin.Spec{
		Name: "jq", Path: filepath.Join(dir, "jq.wasm"), Kind: plugin.KindWASICLI,
		Limits: plugin.Limits{Memory: defaults.Memory, Timeout: 5 * time.Second, MaxOutput: defaults.MaxOutput, MaxWrite: defaults.MaxWrite, MaxFiles: 7},
		Mounts: []plugin.Mount{
			{Name: "data", Host: filepath.Join(dir, "data"), Guest: "/data", Mode: plugin.MountRO},
			{Name: "out", Host: filepath.Join(dir, "out"), Guest: "/out", Mode: plugin.MountRW},
		},
		Env: map[string]string{"A": "1"}, Clock: true,
		Tools: []plugin.CLITool{{Name: "jq", Description: "runs jq", InputSchema: json.RawMessage(`{"properties":{"filter":{"type":"string"}},"type":"object"}`)}},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(plugin.CLITool{}, "Command")); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	argv, stdin, err := got.Tools[0].Command(json.RawMessage(`{"filter": ".a"}`))
	if err != nil || !cmp.Equal(argv, []string{"jq", "-c", ".a"}) || string(stdin) != "{}" {
		t.Errorf("command line = %q, %q, %v", argv, stdin, err)
	}
}

// TestEnumSpellings: every value of an agents.hcl enumeration is spelled the
// same in config and in the package the host converts it for. (The plugin
// kinds are one table, internal/pluginkind, for both.)
func TestEnumSpellings(t *testing.T) {
	for _, pair := range [][2]string{
		{string(config.MountRO), string(plugin.MountRO)},
		{string(config.MountRW), string(plugin.MountRW)},
		{string(config.DoomWarn), string(loop.DoomWarn)},
		{string(config.DoomStop), string(loop.DoomStop)},
		{string(config.DoomAsk), string(loop.DoomAsk)},
		{string(config.FinalToolsOmit), string(loop.FinalToolsOmit)},
		{string(config.FinalToolsNone), string(loop.FinalToolsNone)},
	} {
		if pair[0] != pair[1] {
			t.Errorf("config spells %q, the host converts it to %q", pair[0], pair[1])
		}
	}
}

// TestBuildAgent: an agent block becomes a loop.Agent with the step cap in
// effect, the provider-side model id, the typed doom action and final-step
// mode, the provider's retry policy, its own prompts only, and the host's
// limits on a response's tool calls (the slots are the host's, one set).
func TestBuildAgent(t *testing.T) {
	ctx := context.Background()
	cfg := project(t, map[string]string{"agents.hcl": `
host {
  max_steps          = 30
  max_calls_per_step = 7
  max_parallel_tools = 3
}
provider "p" {
  base_url         = "http://127.0.0.1:1/v1"
  final_step_tools = "none"
  retry {
    attempts = 2
  }
}
model "m" {
  provider = "p"
  name     = "gpt-x"
}
agent "a" {
  steps            = 40
  budget_prompt    = "BUDGET"
  subagents        = ["b"]
  doom_loop {
    action = "stop"
  }
}
agent "b" {
  steps = 5
}
`})
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	defer h.Close(ctx)
	a := h.Agent("a")
	got := loop.Agent{
		Name:    a.Name,
		ModelID: a.ModelID,
		Policy: loop.Policy{
			StepsMax:        a.StepsMax,
			DoomThreshold:   a.DoomThreshold,
			DoomAction:      a.DoomAction,
			FinalStepTools:  a.FinalStepTools,
			Retry:           a.Retry,
			Prompts:         a.Prompts,
			MaxDepth:        a.MaxDepth,
			MaxCallsPerStep: a.MaxCallsPerStep,
		},
	}
	want := loop.Agent{
		Name:    "a",
		ModelID: "gpt-x",
		Policy: loop.Policy{
			StepsMax:        30,
			DoomThreshold:   defaults.DoomThreshold,
			DoomAction:      loop.DoomStop,
			FinalStepTools:  loop.FinalToolsNone,
			Retry:           loop.RetryPolicy{Attempts: 2, Initial: defaults.RetryInitial, MaxDelay: defaults.RetryMaxDelay},
			Prompts:         loop.Prompts{Budget: "BUDGET"},
			MaxDepth:        defaults.MaxDepth,
			MaxCallsPerStep: 7,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agent a (-want +got):\n%s", diff)
	}
	if n := h.Slots().Size(); n != 3 {
		t.Errorf("the host has %d tool slots, want max_parallel_tools = 3", n)
	}
	if len(a.Subagents) != 1 || a.Subagents[0] != h.Agent("b") || h.Agent("b").StepsMax != 5 || h.Agent("b").DoomAction != loop.DoomWarn {
		t.Errorf("subagent b = %+v", a.Subagents)
	}
}
