package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/pluginkind"
)

// example uses every block of agents.hcl, with its one-line blocks split into one
// attribute per line (HCL allows a single attribute in a one-line block).
const example = `host {
  max_steps = 200            # hard ceiling for every agent (default 200)
  data_dir  = ".agenthost"   # sessions, cassettes, compilation cache
  max_depth = 3              # subagent nesting limit
  max_parallel_tools = 4     # tool calls at once (default 8)
  max_calls_per_step = 100   # tool calls taken from one response (default 64)
}

provider "local" {
  base_url = env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
  api_key  = env("OPENAI_API_KEY", "")
  retry {
    attempts  = 5
    initial   = "1s"
    max_delay = "60s"
  }
  final_step_tools = "omit"  # "omit" (default) | "none": keep tools, tool_choice none
}

model "default" {
  provider       = "local"
  name           = "qwen2.5:7b-instruct"
  context_window = 32768
}

plugin "core" {
  source = "builtin:core"    # or a path to a .wasm file; sha256 = "..." pins it
  kind   = "agenthost"       # agenthost | wasi_cli | extism; detected when omitted
  limits {
    memory     = "128MiB"
    timeout    = "10s"
    max_output = "1MiB"
    max_write  = "32MiB"
    max_files  = 500
  }
  mount "workspace" {
    host  = "."
    guest = "/workspace"
    mode  = "rw"
  }
  env    = { TZ = "UTC" }
  clock  = true              # real wall clock; default is a fixed fake clock
  random = true              # crypto random; default is deterministic
}

plugin "jq" {                # a third-party WASI command wrapped as a tool
  source = "plugins/jq.wasm"
  kind   = "wasi_cli"
  tool "jq" {
    description  = "Apply a jq filter to a JSON document"
    input_schema = {
      type       = "object"
      required   = ["filter", "json"]
      properties = { filter = { type = "string" }, json = { type = "string" } }
    }
    argv  = ["jq", "-c", args.filter]   # evaluated per call; args = the call's arguments
    stdin = args.json
  }
}

agent "build" {
  description = "..."
  model       = "default"
  prompt      = file("prompts/build.md")
  steps       = 25           # optional; unset = host.max_steps
  budget      = 50           # optional tool-call budget; unset = unlimited
  tools       = ["read_file", "list_dir", "jq"]
  subagents   = ["explore"]
  max_steps_prompt = file("prompts/explore-final.md")  # optional override
  doom_loop {
    threshold = 3
    action    = "warn"
  }
}

agent "explore" {
  model = "default"
  tools = ["read_file", "list_dir"]
}
`

var exampleFiles = map[string]string{
	"plugins/jq.wasm":          string(coreModule),
	"prompts/build.md":         "You build things.\n",
	"prompts/explore-final.md": "Summarise.\n",
}

func TestExampleDecodes(t *testing.T) {
	dir := writeTree(t, exampleFiles)
	env := map[string]string{"OPENAI_API_KEY": "sk-test"}
	cfg, diags := Parse([]byte(example), filepath.Join(dir, "agents.hcl"), Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", dump(diags))
	}
	if cfg.File != filepath.Join(dir, "agents.hcl") || cfg.Dir != dir {
		t.Errorf("File, Dir = %q, %q", cfg.File, cfg.Dir)
	}
	if want := (Host{MaxSteps: 200, DataDir: filepath.Join(dir, ".agenthost"), MaxDepth: 3, MaxParallelTools: 4, MaxCallsPerStep: 100}); cfg.Host != want {
		t.Errorf("Host = %+v, want %+v", cfg.Host, want)
	}

	if len(cfg.Providers) != 1 {
		t.Fatalf("%d providers", len(cfg.Providers))
	}
	p := *cfg.Providers[0]
	p.DefRange = hcl.Range{}
	wantP := Provider{
		Name:             "local",
		BaseURL:          "http://127.0.0.1:11434/v1",
		APIKey:           "sk-test",
		APIKeyEnv:        []string{"OPENAI_API_KEY"},
		Retry:            Retry{Attempts: 5, Initial: time.Second, MaxDelay: time.Minute},
		FinalStepTools:   "omit",
		IdleTimeout:      120 * time.Second,
		RequestTimeout:   10 * time.Minute,
		StructuredOutput: "json_schema",
	}
	if d := cmp.Diff(wantP, p); d != "" {
		t.Errorf("provider (-want +got):\n%s", d)
	}

	m := *cfg.Model("default")
	m.DefRange = hcl.Range{}
	if d := cmp.Diff(Model{Name: "default", Provider: "local", ID: "qwen2.5:7b-instruct", ContextWindow: 32768}, m); d != "" {
		t.Errorf("model (-want +got):\n%s", d)
	}

	core := *cfg.Plugin("core")
	core.DefRange = hcl.Range{}
	for i := range core.Mounts {
		core.Mounts[i].DefRange = hcl.Range{}
	}
	wantCore := Plugin{
		Name:    "core",
		Source:  "builtin:core",
		Builtin: "core",
		Kind:    pluginkind.Agenthost,
		Limits:  Limits{Memory: 128 << 20, Timeout: 10 * time.Second, MaxOutput: 1 << 20, MaxWrite: 32 << 20, MaxFiles: 500},
		Mounts:  []Mount{{Name: "workspace", Host: dir, Guest: "/workspace", Mode: "rw"}},
		Env:     map[string]string{"TZ": "UTC"},
		Clock:   true,
		Random:  true,
	}
	if d := cmp.Diff(wantCore, core); d != "" {
		t.Errorf("core (-want +got):\n%s", d)
	}
	if core.Mounts[0].ReadOnly() {
		t.Error("rw mount reports read-only")
	}

	jq := cfg.Plugin("jq")
	if jq.Path != filepath.Join(dir, "plugins", "jq.wasm") || jq.Kind != pluginkind.WASICLI || jq.Builtin != "" {
		t.Errorf("jq = path %q kind %q builtin %q", jq.Path, jq.Kind, jq.Builtin)
	}
	if want := (Limits{Memory: 256 << 20, Timeout: 30 * time.Second, MaxOutput: 1 << 20, MaxWrite: 64 << 20, MaxFiles: 10000}); jq.Limits != want {
		t.Errorf("jq limits = %+v, want defaults %+v", jq.Limits, want)
	}
	if len(jq.Tools) != 1 {
		t.Fatalf("jq has %d tools", len(jq.Tools))
	}
	tool := jq.Tools[0]
	if tool.Name != "jq" || tool.Description != "Apply a jq filter to a JSON document" {
		t.Errorf("tool = %q %q", tool.Name, tool.Description)
	}
	var schema, wantSchema any
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(`{"type":"object","required":["filter","json"],"properties":{"filter":{"type":"string"},"json":{"type":"string"}}}`), &wantSchema)
	if !cmp.Equal(schema, wantSchema) {
		t.Errorf("input_schema = %s", tool.InputSchema)
	}

	build := cfg.Agent("build")
	if build == nil || cfg.Agent("nope") != nil {
		t.Fatal("Agent lookup")
	}
	if build.Prompt != "You build things.\n" || build.MaxStepsPrompt != "Summarise.\n" || build.Model != "default" || build.Description != "..." {
		t.Errorf("build = %+v", build)
	}
	if *build.Steps != 25 || *build.Budget != 50 || cfg.StepsMax(build) != 25 {
		t.Errorf("steps %d budget %d cap %d", *build.Steps, *build.Budget, cfg.StepsMax(build))
	}
	if !cmp.Equal(build.Tools, []string{"read_file", "list_dir", "jq"}) || !cmp.Equal(build.Subagents, []string{"explore"}) {
		t.Errorf("tools %q subagents %q", build.Tools, build.Subagents)
	}
	if r := build.ToolRanges[2]; r.Start.Line != 67 || r.Start.Column != 43 {
		t.Errorf("ToolRanges[2] at %d:%d, want 67:43", r.Start.Line, r.Start.Column)
	}
	if build.DoomLoop != (DoomLoop{Threshold: 3, Action: "warn"}) {
		t.Errorf("doom loop %+v", build.DoomLoop)
	}
	explore := cfg.Agent("explore")
	if explore.Steps != nil || explore.Budget != nil || cfg.StepsMax(explore) != 200 || explore.DoomLoop != (DoomLoop{Threshold: 3, Action: "warn"}) {
		t.Errorf("explore defaults: %+v", explore)
	}
	if _, ok := cfg.Files[filepath.Join(dir, "agents.hcl")]; !ok {
		t.Errorf("Files lacks the config: %v", cfg.Files)
	}

	// The call-time expressions of the example evaluate as documented.
	argv, stdin, err := tool.Eval(json.RawMessage(`{"filter": ".a", "json": "{\"a\":1}"}`))
	if err != nil || !cmp.Equal(argv, []string{"jq", "-c", ".a"}) || string(stdin) != `{"a":1}` {
		t.Errorf("Eval = %q, %q, %v", argv, stdin, err)
	}
}

func TestDefaults(t *testing.T) {
	cfg, diags := parseIn(t, `provider "p" {
  base_url = "https://api.example.com/v1/"
}
model "gpt-x" {}
agent "solo" {}
`, nil)
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", dump(diags))
	}
	if cfg.Host.MaxSteps != 200 || cfg.Host.MaxDepth != 3 || filepath.Base(cfg.Host.DataDir) != ".agenthost" || !filepath.IsAbs(cfg.Host.DataDir) {
		t.Errorf("host = %+v", cfg.Host)
	}
	p := cfg.Providers[0]
	if p.BaseURL != "https://api.example.com/v1" || p.FinalStepTools != "omit" || p.Retry != (Retry{5, time.Second, time.Minute}) || p.IdleTimeout != 2*time.Minute || p.RequestTimeout != 10*time.Minute {
		t.Errorf("provider = %+v", p)
	}
	// A model's provider defaults to the only provider, its id to its label;
	// an agent's model to the only model.
	if m := cfg.Models[0]; m.Provider != "p" || m.ID != "gpt-x" || m.Temperature != nil {
		t.Errorf("model = %+v", m)
	}
	a, err := cfg.DefaultAgent()
	if err != nil || a.Name != "solo" || a.Model != "gpt-x" {
		t.Errorf("DefaultAgent = %v, %v", a, err)
	}
}

func TestDefaultAgent(t *testing.T) {
	two := base + "agent \"a\" {}\nagent \"b\" {}\n"
	cfg, diags := parseIn(t, two, nil)
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	_, err := cfg.DefaultAgent()
	if err == nil || !strings.Contains(err.Error(), `"a", "b"`) {
		t.Errorf("DefaultAgent error = %v, want one listing the agents", err)
	}
	cfg, diags = parseIn(t, base+"agent \"a\" {}\nagent \"b\" {\n  default = true\n}\n", nil)
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	if a, err := cfg.DefaultAgent(); err != nil || a.Name != "b" {
		t.Errorf("DefaultAgent = %v, %v; want b", a, err)
	}
}

func TestCheckTools(t *testing.T) {
	cfg, diags := parseIn(t, base+"agent \"a\" {\n  tools = [\"read_file\", \"lst_dir\"]\n}\n", nil)
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	got := cfg.CheckTools([]string{"read_file", "list_dir"})
	if len(got) != 1 || got[0].Summary != "Unknown tool" || pos(got[0]) != "4:25" || !strings.Contains(got[0].Detail, `Did you mean "list_dir"?`) {
		t.Errorf("CheckTools:%s", dump(got))
	}
	if got := cfg.CheckTools([]string{"read_file", "lst_dir"}); len(got) != 0 {
		t.Errorf("CheckTools with every tool:%s", dump(got))
	}
}

// TestPartial: with Options.Partial, a config whose errors all lie in
// provider, model and agent blocks comes back with them (its tool names
// checkable); an error in another block, or no Partial, gives no config.
func TestPartial(t *testing.T) {
	agentErr := base + "agent \"a\" {\n  steps = \"ten\"\n  tools = [\"lst_dir\"]\n}\n"
	cfg, diags := Parse([]byte(agentErr), filepath.Join(t.TempDir(), "agents.hcl"), Options{Partial: true})
	if !diags.HasErrors() || cfg == nil {
		t.Fatalf("agent error, Partial: cfg %v, diags:%s", cfg != nil, dump(diags))
	}
	if got := cfg.CheckTools([]string{"list_dir"}); len(got) != 1 || got[0].Summary != "Unknown tool" {
		t.Errorf("CheckTools on the partial config:%s", dump(got))
	}
	if cfg, _ := Parse([]byte(agentErr), filepath.Join(t.TempDir(), "agents.hcl"), Options{}); cfg != nil {
		t.Error("agent error without Partial: got a config")
	}
	hostErr := base + "host {\n  max_parallel_tools = \"x\"\n}\nagent \"a\" {\n  tools = [\"lst_dir\"]\n}\n"
	if cfg, diags := Parse([]byte(hostErr), filepath.Join(t.TempDir(), "agents.hcl"), Options{Partial: true}); cfg != nil || !diags.HasErrors() {
		t.Errorf("host block error, Partial: cfg %v, diags:%s", cfg != nil, dump(diags))
	}
}

func TestEnvAndFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"p.md": "hello"})
	src := base + `agent "a" {
  description = env("DESC")
  prompt      = file("p.md")
  budget_prompt = env("UNSET", "fallback")
}
`
	cfg, diags := Parse([]byte(src), filepath.Join(dir, "agents.hcl"), Options{
		LookupEnv: func(k string) (string, bool) {
			if k == "DESC" {
				return "from env", true
			}
			return "", false
		},
	})
	if len(diags) > 0 {
		t.Fatal(dump(diags))
	}
	a := cfg.Agents[0]
	if a.Description != "from env" || a.Prompt != "hello" || a.BudgetPrompt != "fallback" {
		t.Errorf("agent = %q %q %q", a.Description, a.Prompt, a.BudgetPrompt)
	}
	// An empty variable counts as unset, like ${NAME:-default}.
	_, diags = Parse([]byte(src), filepath.Join(dir, "agents.hcl"), Options{
		LookupEnv: func(k string) (string, bool) { return "", true },
	})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "DESC is not set (or empty)") {
		t.Errorf("empty DESC:%s", dump(diags))
	}
	cfg, diags = Parse([]byte(src), filepath.Join(dir, "agents.hcl"), Options{
		LookupEnv: func(k string) (string, bool) { return map[string]string{"DESC": "d"}[k], true },
	})
	if len(diags) > 0 || cfg.Agents[0].BudgetPrompt != "fallback" {
		t.Errorf("empty variable did not fall back to the default:%s", dump(diags))
	}
}

// TestEnvReads: the variables a provider's api_key and a model's name read
// with env() are kept, so that messages about them can name them.
func TestEnvReads(t *testing.T) {
	src := `provider "p" {
  base_url = "http://127.0.0.1:1/v1"
  api_key  = env("KEY_A", env("KEY_B", ""))
}
provider "q" {
  base_url = "http://127.0.0.1:2/v1"
  api_key  = "literal"
}
model "m" {
  provider = "p"
  name     = "${env("MODEL", "fallback")}-instruct"
}
model "n" {
  provider = "q"
  name     = "fixed"
}
agent "a" {
  model = "m"
}
`
	cfg, diags := Parse([]byte(src), filepath.Join(t.TempDir(), "agents.hcl"), Options{
		LookupEnv: func(k string) (string, bool) { return "", false },
	})
	// The literal key is the one warning (TestLiteralAPIKey).
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "API key written in the config" {
		t.Fatal(dump(diags))
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"provider p api_key", cfg.Provider("p").APIKeyEnv, []string{"KEY_A", "KEY_B"}},
		{"provider q api_key", cfg.Provider("q").APIKeyEnv, nil},
		{"model m name", cfg.Model("m").IDEnv, []string{"MODEL"}},
		{"model n name", cfg.Model("n").IDEnv, nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s reads %q, want %q", c.what, c.got, c.want)
		}
	}
	if id := cfg.Model("m").ID; id != "fallback-instruct" {
		t.Errorf("model m name = %q", id)
	}
}

func TestEval(t *testing.T) {
	src := base + `plugin "t" {
  source = "t.wasm"
  tool "t" {
    input_schema = {
      type       = "object"
      properties = { filter = { type = "string" }, n = { type = "number" }, raw = { type = "boolean" }, doc = { type = "object" } }
    }
    argv  = ["t", "-n", args.n, "--raw=${args.raw}", try(args.filter, ".")]
    stdin = try(jsonencode(args.doc), null)
  }
  tool "s" {
    argv  = ["s"]
  }
}
agent "a" {}
`
	cfg, diags := parseIn(t, src, map[string]string{"t.wasm": string(coreModule)})
	if len(diags) > 0 {
		t.Fatal(dump(diags))
	}
	tool, simple := cfg.Plugins[0].Tools[0], cfg.Plugins[0].Tools[1]
	tests := []struct {
		name      string
		tool      *CLITool
		args      string
		argv      []string
		stdin     string // "-" for nil
		errSubstr string
	}{
		{"all arguments", tool, `{"filter": ".a | length", "n": 3, "raw": true, "doc": {"k": [1, 2]}}`,
			[]string{"t", "-n", "3", "--raw=true", ".a | length"}, `{"k":[1,2]}`, ""},
		{"fraction", tool, `{"n": 1.5, "raw": false}`, []string{"t", "-n", "1.5", "--raw=false", "."}, "-", ""},
		{"missing argument", tool, `{"raw": true}`, nil, "", `argv: Unsupported attribute: This object does not have an attribute named "n"`},
		{"null argument", tool, `{"n": null, "raw": true}`, nil, "", "argv[2] is null"},
		{"object argument", tool, `{"n": {"x": 1}, "raw": true}`, nil, "", "argv[2] is object, not a string"},
		{"arguments not an object", tool, `[1]`, nil, "", "arguments must be a JSON object"},
		{"arguments not JSON", tool, `{"n": `, nil, "", "arguments are not valid JSON"},
		{"no arguments", simple, ``, []string{"s"}, "-", ""},
		{"null arguments", simple, `null`, []string{"s"}, "-", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, stdin, err := tc.tool.Eval(json.RawMessage(tc.args))
			if tc.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.errSubstr)
				}
				if !strings.HasPrefix(err.Error(), `tool "t": `) {
					t.Errorf("err = %v, want it to name the tool", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(argv, tc.argv) {
				t.Errorf("argv = %q, want %q", argv, tc.argv)
			}
			if tc.stdin == "-" {
				if stdin != nil {
					t.Errorf("stdin = %q, want nil", stdin)
				}
			} else if string(stdin) != tc.stdin {
				t.Errorf("stdin = %q, want %q", stdin, tc.stdin)
			}
		})
	}
}

func TestWriteDiagnostics(t *testing.T) {
	src := base + "agent \"a\" {\n\tsteps  = 0\n  tools  = [\"réad file\"]\n}\n"
	files := map[string]*hcl.File{}
	dir := t.TempDir()
	name := filepath.Join(dir, "agents.hcl")
	_, diags := Parse([]byte(src), name, Options{LookupEnv: noEnv, Files: files})
	t.Chdir(dir)

	var buf bytes.Buffer
	WriteDiagnostics(&buf, files, diags, false)
	want := "agents.hcl:4:11: error: Invalid steps\n" +
		"  4 | \tsteps  = 0\n" +
		"    | \t         ^\n" +
		"steps must be at least 1; steps = 1 makes a text-only agent (no tools).\n" +
		"\n" +
		"agents.hcl:5:13: error: Invalid tool name\n" +
		"  5 |   tools  = [\"réad file\"]\n" +
		"    |             ^^^^^^^^^^^\n" +
		"Tool names sent to a model must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -, at most 64); try \"r_ad_file\".\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}

	// Without the parsed files the source is read from disk; with color the
	// header is bold and the severity red.
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	WriteDiagnostics(&buf, nil, diags[:1], true)
	if !strings.HasPrefix(buf.String(), "\x1b[1magents.hcl:4:11: \x1b[31merror:\x1b[0m\x1b[1m Invalid steps\x1b[0m\n  4 | \tsteps  = 0\n") {
		t.Errorf("colored output: %q", buf.String())
	}

	// A warning says warning; a diagnostic without a subject has no position.
	buf.Reset()
	WriteDiagnostics(&buf, nil, hcl.Diagnostics{
		{Severity: hcl.DiagWarning, Summary: "Careful", Detail: "Look."},
		{Severity: hcl.DiagError, Summary: "Cannot read config file"},
	}, false)
	if want := "warning: Careful\nLook.\n\nerror: Cannot read config file\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestLoad(t *testing.T) {
	dir := writeTree(t, map[string]string{"agents.hcl": base + "agent \"a\" {\n  steps = 0\n}\n"})
	t.Chdir(dir)
	files := map[string]*hcl.File{}
	cfg, diags := Load("agents.hcl", Options{Files: files})
	if cfg != nil || len(diags) != 1 || diags[0].Subject.Filename != filepath.Join(dir, "agents.hcl") {
		t.Fatalf("Load = %v,%s", cfg, dump(diags))
	}
	if files[filepath.Join(dir, "agents.hcl")] == nil {
		t.Error("Options.Files not filled on error")
	}
	cfg, got, diags := LoadFiles("agents.hcl", Options{})
	if cfg != nil || len(diags) != 1 || got[filepath.Join(dir, "agents.hcl")] == nil {
		t.Errorf("LoadFiles = %v, %v,%s", cfg, got, dump(diags))
	}
	_, diags = Load("missing.hcl", Options{})
	if len(diags) != 1 || diags[0].Summary != "Cannot read config file" || !strings.Contains(diags[0].Detail, "agenthost init") {
		t.Errorf("missing file:%s", dump(diags))
	}
}

func TestStarterLoads(t *testing.T) {
	files := Starter()
	for _, name := range []string{"agents.hcl", "prompts/build.md", "prompts/explore.md"} {
		if len(files[name]) == 0 {
			t.Errorf("Starter lacks %s", name)
		}
	}
	tree := map[string]string{}
	for name, b := range files {
		tree[name] = string(b)
	}
	dir := writeTree(t, tree)
	if err := os.Mkdir(filepath.Join(dir, StarterWorkspace), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(filepath.Join(dir, "agents.hcl"), Options{LookupEnv: noEnv})
	if len(diags) > 0 {
		t.Fatalf("starter diagnostics:%s", dump(diags))
	}
	if a, err := cfg.DefaultAgent(); err != nil || a.Name != "build" || a.Prompt == "" {
		t.Errorf("starter default agent = %v, %v", a, err)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  bool
	}{
		{"64MiB", 64 << 20, false}, {"1GiB", 1 << 30, false}, {"512KiB", 512 << 10, false},
		{"1MB", 1e6, false}, {"1048576", 1 << 20, false}, {"10 B", 10, false}, {"2 KB", 2000, false},
		{"1.5MiB", 0, true}, {"MiB", 0, true}, {"-1", 0, true}, {"12 parsecs", 0, true}, {"", 0, true},
		{"99999999999TiB", 0, true},
	}
	for _, tc := range tests {
		got, err := parseSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		name  string
		cands []string
		want  string
	}{
		{"biuld", []string{"build", "explore"}, "build"},
		{"xyz", []string{"build", "explore"}, ""},
		{"defualt", []string{"default"}, "default"},
		{"a", nil, ""},
		{"exploer", []string{"explore", "explorer"}, "explorer"},
	}
	for _, tc := range tests {
		if got := Suggest(tc.name, tc.cands); got != tc.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", tc.name, tc.cands, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte(string(Starter()["agents.hcl"])))
	f.Add([]byte(base + "agent \"a\" {\n  steps = 0\n  subagents = [\"a\"]\n}\n"))
	f.Add([]byte("plugin \"x\" {\n  source = \"x.wasm\"\n  tool \"t\" {\n    argv = [args.a, 1, true, null]\n    stdin = args\n  }\n}\n"))
	dir := f.TempDir()
	for name, content := range exampleFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, diags := Parse(src, filepath.Join(dir, "agents.hcl"), Options{LookupEnv: noEnv})
		if (cfg == nil) != diags.HasErrors() {
			t.Fatalf("cfg = %v with errors = %v", cfg, diags.HasErrors())
		}
		WriteDiagnostics(&bytes.Buffer{}, map[string]*hcl.File{}, diags, false)
		if cfg == nil {
			return
		}
		for _, p := range cfg.Plugins {
			for _, tool := range p.Tools {
				tool.Eval(json.RawMessage(`{"a": 1, "filter": ".", "json": "{}"}`))
			}
		}
	})
}

// TestInputsRecorded: the files read with file() are listed in Inputs,
// absolute, sorted and once each, for the host to protect.
func TestInputsRecorded(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"prompts/a.md": "A", "b.txt": "B"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := `provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
agent "a" {
  prompt      = file("prompts/a.md")
  description = file("./b.txt")
}
agent "b" {
  prompt = file("prompts/../prompts/a.md")
}
`
	cfg, diags := Parse([]byte(src), filepath.Join(dir, "agents.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{filepath.Join(dir, "b.txt"), filepath.Join(dir, "prompts", "a.md")}
	if !cmp.Equal(cfg.Inputs, want) {
		t.Errorf("Inputs = %q, want %q", cfg.Inputs, want)
	}
}

// TestEvalCallFunctions covers the functions and conditionals wasi_cli argv
// and stdin may use: each tool's argv is checked at load and evaluated per
// call.
func TestEvalCallFunctions(t *testing.T) {
	src := base + `plugin "t" {
  source = "t.wasm"
  tool "concat" {
    argv = concat(["cat", "--"], args.files)
  }
  tool "cond" {
    argv = concat(["grep"], args.ignore_case ? ["-i"] : [], [args.pattern])
  }
  tool "cond_string" {
    argv = ["ls", args.all ? "-a" : "-1"]
  }
  tool "strings" {
    argv = [replace(args.s, "/", "_"), trimprefix(args.s, "./"), trimsuffix(args.s, ".txt")]
  }
  tool "split" {
    argv = concat(["echo"], split(",", args.csv))
  }
  tool "length" {
    argv = ["n", length(args.files), length(args.s), length(args.obj)]
  }
  tool "contains" {
    argv  = ["c", contains(args.files, "b"), contains(args.s, "x")]
    stdin = contains(args.files, "a") ? "has a" : null
  }
}
agent "a" {}
`
	cfg, diags := parseIn(t, src, map[string]string{"t.wasm": string(coreModule)})
	if len(diags) > 0 {
		t.Fatal(dump(diags))
	}
	tools := map[string]*CLITool{}
	for _, tl := range cfg.Plugins[0].Tools {
		tools[tl.Name] = tl
	}
	tests := []struct {
		tool, args string
		argv       []string
		stdin      string // "-" for nil
	}{
		{"concat", `{"files": ["a b", "c"]}`, []string{"cat", "--", "a b", "c"}, "-"},
		{"concat", `{"files": []}`, []string{"cat", "--"}, "-"},
		{"cond", `{"ignore_case": true, "pattern": "x"}`, []string{"grep", "-i", "x"}, "-"},
		{"cond", `{"ignore_case": false, "pattern": "x"}`, []string{"grep", "x"}, "-"},
		{"cond_string", `{"all": true}`, []string{"ls", "-a"}, "-"},
		{"cond_string", `{"all": false}`, []string{"ls", "-1"}, "-"},
		{"strings", `{"s": "./a/b.txt"}`, []string{"._a_b.txt", "a/b.txt", "./a/b"}, "-"},
		{"split", `{"csv": "x,y,,z"}`, []string{"echo", "x", "y", "", "z"}, "-"},
		{"length", `{"files": ["a", "b", "c"], "s": "héllo", "obj": {"k": 1, "l": 2}}`, []string{"n", "3", "5", "2"}, "-"},
		{"contains", `{"files": ["a", "b"], "s": "xyz"}`, []string{"c", "true", "true"}, "has a"},
		{"contains", `{"files": ["c"], "s": "abc"}`, []string{"c", "false", "false"}, "-"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			argv, stdin, err := tools[tc.tool].Eval(json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(argv, tc.argv) {
				t.Errorf("argv = %q, want %q", argv, tc.argv)
			}
			if got := "-"; stdin != nil {
				got = string(stdin)
				if got != tc.stdin {
					t.Errorf("stdin = %q, want %q", got, tc.stdin)
				}
			} else if tc.stdin != "-" {
				t.Errorf("stdin = nil, want %q", tc.stdin)
			}
		})
	}
}

// TestLiteralAPIKey: an api_key written as a literal is a warning at the
// attribute that points to env(); one read with env(), computed, or empty
// is not.
func TestLiteralAPIKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		warn bool
	}{
		{`"sk-abc123"`, true},
		{`"sk-${"abc"}"`, true},
		{`env("OPENAI_API_KEY", "")`, false},
		{`"${env("PREFIX", "")}-key"`, false},
		{`""`, false},
	} {
		src := "provider \"p\" {\n  base_url = \"http://127.0.0.1:1/v1\"\n  api_key  = " + tc.key + "\n}\nmodel \"m\" {\n  provider = \"p\"\n}\nagent \"a\" {}\n"
		_, diags := Parse([]byte(src), filepath.Join(t.TempDir(), "agents.hcl"), Options{
			LookupEnv: func(k string) (string, bool) { return "", false },
		})
		var got []*hcl.Diagnostic
		for _, d := range diags {
			if d.Summary == "API key written in the config" {
				got = append(got, d)
			}
		}
		if diags.HasErrors() || (len(got) == 1) != tc.warn || len(got) > 1 {
			t.Errorf("api_key = %s: %s", tc.key, dump(diags))
			continue
		}
		if tc.warn && (got[0].Severity != hcl.DiagWarning || got[0].Subject == nil || got[0].Subject.Start.Line != 3 || got[0].Subject.Start.Column != 3 ||
			!strings.Contains(got[0].Detail, `env("OPENAI_API_KEY")`)) {
			t.Errorf("api_key = %s: warning %+v, want one at 3:3 naming env(\"OPENAI_API_KEY\")", tc.key, got[0])
		}
	}
}
