package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// base declares a provider and a model on lines 1-2, so that every case
// below starts on line 3.
const base = `provider "p" { base_url = "http://127.0.0.1:1/v1" }
model "m" { provider = "p" }
`

// wasm headers written by the tests.
var (
	coreModule = []byte("\x00asm\x01\x00\x00\x00")
	component  = []byte("\x00asm\x0d\x00\x01\x00")
)

// writeTree writes files (path → content) under a new temporary directory
// and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func noEnv(string) (string, bool) { return "", false }

// parseIn parses src as agents.hcl in a directory holding files.
func parseIn(t testing.TB, src string, files map[string]string) (*Config, hcl.Diagnostics) {
	t.Helper()
	dir := writeTree(t, files)
	return Parse([]byte(src), filepath.Join(dir, "agents.hcl"), Options{LookupEnv: noEnv})
}

func pos(d *hcl.Diagnostic) string {
	if d.Subject == nil {
		return "-"
	}
	return fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column)
}

func dump(diags hcl.Diagnostics) string {
	var sb strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&sb, "\n  %s %s: %s | %s", pos(d), map[hcl.DiagnosticSeverity]string{hcl.DiagError: "error", hcl.DiagWarning: "warning"}[d.Severity], d.Summary, d.Detail)
	}
	return sb.String()
}

// TestValidationRules checks every validation rule of agents.hcl: each case is a file
// with one problem, and the test wants exactly one error diagnostic with
// the summary, a detail carrying the hint, and the subject's line:col.
func TestValidationRules(t *testing.T) {
	hash := "0000000000000000000000000000000000000000000000000000000000000000"
	wasmFiles := map[string]string{"jq.wasm": string(coreModule)}
	tests := []struct {
		name    string
		src     string // appended to base
		files   map[string]string
		summary string
		detail  string // substring of the detail
		at      string // line:col of the subject
		warning bool
	}{
		{"steps zero", "agent \"a\" {\n  steps = 0\n}\n", nil,
			"Invalid steps", "steps = 1 makes a text-only agent", "4:11", false},
		{"steps negative", "agent \"a\" {\n  steps = -1\n}\n", nil,
			"Invalid steps", "steps must be at least 1", "4:11", false},
		{"steps not whole", "agent \"a\" {\n  steps = 1.5\n}\n", nil,
			"Unsuitable value type", "whole number", "4:11", false},
		{"steps not a number", "agent \"a\" {\n  steps = \"many\"\n}\n", nil,
			"Unsuitable value type", "a number is required", "4:12", false},
		{"steps above max_steps", "host {\n  max_steps = 10\n}\nagent \"a\" {\n  steps = 20\n}\n", nil,
			"steps above host.max_steps", "stops after 10 steps", "7:11", true},
		{"budget zero", "agent \"a\" {\n  budget = 0\n}\n", nil,
			"Invalid budget", "remove it for an unlimited budget", "4:12", false},
		{"budget negative", "agent \"a\" {\n  budget = -3\n}\n", nil,
			"Invalid budget", "at least 1", "4:12", false},
		{"max_steps zero", "host {\n  max_steps = 0\n}\nagent \"a\" {}\n", nil,
			"Invalid max_steps", "at least 1", "4:15", false},
		{"max_depth negative", "host {\n  max_depth = -1\n}\nagent \"a\" {}\n", nil,
			"Invalid max_depth", "0 allows no subagents", "4:15", false},
		{"max_parallel_tools zero", "host {\n  max_parallel_tools = 0\n}\nagent \"a\" {}\n", nil,
			"Invalid max_parallel_tools", "must be at least 1: it is how many tool calls run at once", "4:24", false},
		{"max_calls_per_step negative", "host {\n  max_calls_per_step = -5\n}\nagent \"a\" {}\n", nil,
			"Invalid max_calls_per_step", "must be at least 1: it is how many tool calls of one model response run", "4:24", false},
		{"otel quoted", "host {\n  otel = \"true\"\n}\nagent \"a\" {}\n", nil,
			"Invalid otel", `otel must be true or false (without quotes), not the string "true"`, "4:10", false},
		{"otel number", "host {\n  otel = 1\n}\nagent \"a\" {}\n", nil,
			"Invalid otel", "not a number; otel = true exports OpenTelemetry traces", "4:10", false},
		{"data_dir empty", "host {\n  data_dir = \"\"\n}\nagent \"a\" {}\n", nil,
			"Invalid data_dir", "remove it for the default", "4:14", false},
		{"temporal address without port", "temporal {\n  address = \"localhost\"\n}\nagent \"a\" {}\n", nil,
			"Invalid Temporal address", "want HOST:PORT", "4:13", false},
		{"temporal address bad port", "temporal {\n  address = \"localhost:99999\"\n}\nagent \"a\" {}\n", nil,
			"Invalid Temporal address", "from 1 to 65535", "4:13", false},
		{"temporal task_queue empty", "temporal {\n  task_queue = \"\"\n}\nagent \"a\" {}\n", nil,
			"Invalid task_queue", "non-empty name", "4:16", false},
		{"temporal namespace with space", "temporal {\n  namespace = \"my ns\"\n}\nagent \"a\" {}\n", nil,
			"Invalid namespace", "without spaces", "4:15", false},
		{"unknown model", "agent \"a\" {\n  model = \"mm\"\n}\n", nil,
			"Unknown model", `No model named "mm" is declared. Did you mean "m"?`, "4:11", false},
		{"unknown provider", "model \"x\" {\n  provider = \"pq\"\n}\nagent \"a\" {\n  model = \"m\"\n}\n", nil,
			"Unknown provider", `Did you mean "p"?`, "4:14", false},
		{"unknown provider without suggestion", "model \"x\" {\n  provider = \"openai\"\n}\nagent \"a\" {\n  model = \"m\"\n}\n", nil,
			"Unknown provider", `Declared providers: "p".`, "4:14", false},
		{"missing model with several", "model \"x\" {}\nagent \"a\" {}\n", nil,
			"Missing model", `naming one of the declared models: "m", "x"`, "4:1", false},
		{"unknown subagent", "agent \"build\" {}\nagent \"a\" {\n  subagents = [\"biuld\"]\n}\n", nil,
			"Unknown subagent", `Did you mean "build"?`, "5:16", false},
		{"duplicate agent", "agent \"a\" {}\nagent \"a\" {}\n", nil,
			"Duplicate agent", "already declared on line 3", "4:7", false},
		{"duplicate model", "model \"m\" {}\nagent \"a\" {}\n", nil,
			"Duplicate model", "already declared on line 2", "3:7", false},
		{"duplicate provider", "provider \"p\" {\n  base_url = \"http://x/v1\"\n}\nagent \"a\" {}\n", nil,
			"Duplicate provider", "already declared on line 1", "3:10", false},
		{"duplicate plugin", "plugin \"c\" {\n  source = \"builtin:core\"\n}\nplugin \"c\" {\n  source = \"builtin:core\"\n}\nagent \"a\" {}\n", nil,
			"Duplicate plugin", "already declared on line 3", "6:8", false},
		{"duplicate tool reference", "agent \"a\" {\n  tools = [\"x\", \"x\"]\n}\n", nil,
			"Duplicate tool", `"x" is already listed`, "4:17", false},
		{"invalid tool name", "agent \"a\" {\n  tools = [\"read file\"]\n}\n", nil,
			"Invalid tool name", `^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -, at most 64); try "read_file"`, "4:12", false},
		{"tool name too long", "agent \"a\" {\n  tools = [\"" + strings.Repeat("t", 65) + "\"]\n}\n", nil,
			"Invalid tool name", "at most 64", "4:12", false},
		{"invalid agent name", "agent \"my agent\" {}\n", nil,
			"Invalid agent name", `try "my_agent"`, "3:7", false},
		{"subagent cycle", "agent \"a\" {\n  subagents = [\"b\"]\n}\nagent \"b\" {\n  subagents = [\"a\"]\n}\n", nil,
			"Subagent cycle", `a → b → a. Remove "a" from the subagents of "b"`, "7:16", false},
		{"subagent self cycle", "agent \"a\" {\n  subagents = [\"a\"]\n}\n", nil,
			"Subagent cycle", "a → a.", "4:16", false},
		{"subagent collides with tool", "agent \"b\" {}\nagent \"a\" {\n  tools     = [\"b\"]\n  subagents = [\"b\"]\n}\n", nil,
			"Subagent name collides with a tool", `"b" is both a tool and a subagent of agent "a"`, "6:16", false},
		{"several defaults", "agent \"a\" {\n  default = true\n}\nagent \"b\" {\n  default = true\n}\n", nil,
			"Several default agents", `Agent "a" is already the default (line 3)`, "7:13", false},
		{"no agents", "", nil,
			"No agents", "agent \"build\" {", "1:1", false},
		{"doom_loop threshold", "agent \"a\" {\n  doom_loop {\n    threshold = 1\n  }\n}\n", nil,
			"Invalid threshold", "at least 2", "5:17", false},
		{"doom_loop action", "agent \"a\" {\n  doom_loop {\n    action = \"halt\"\n  }\n}\n", nil,
			"Invalid action", `action must be one of "warn", "stop", "ask", not "halt".`, "5:14", false},
		{"final_step_tools", "provider \"q\" {\n  base_url         = \"http://x/v1\"\n  final_step_tools = \"omitt\"\n}\nagent \"a\" {}\n", nil,
			"Invalid final_step_tools", `Did you mean "omit"?`, "5:22", false},
		{"missing base_url", "provider \"q\" {}\nagent \"a\" {}\n", nil,
			"Missing base_url", "needs base_url", "3:1", false},
		{"invalid base_url", "provider \"q\" {\n  base_url = \"localhost:11434\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "http:// or https://", "4:14", false},
		{"base_url empty port", "provider \"q\" {\n  base_url = \"http://127.0.0.1:/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", `"http://127.0.0.1:/v1" has a colon but no port after it (it would silently use port 80)`, "4:14", false},
		{"base_url empty port https", "provider \"q\" {\n  base_url = \"https://api.example.com:/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "silently use port 443", "4:14", false},
		{"base_url port zero", "provider \"q\" {\n  base_url = \"http://127.0.0.1:0/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "a port is a number from 1 to 65535", "4:14", false},
		{"base_url port too large", "provider \"q\" {\n  base_url = \"http://127.0.0.1:70000/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "has port 70000", "4:14", false},
		{"base_url port not a number", "provider \"q\" {\n  base_url = \"http://127.0.0.1:11434x/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "is not a URL", "4:14", false},
		{"base_url no scheme", "provider \"q\" {\n  base_url = \"127.0.0.1:11434/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "is not a URL", "4:14", false},
		{"base_url no scheme host", "provider \"q\" {\n  base_url = \"//127.0.0.1:11434/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "has no scheme", "4:14", false},
		{"base_url ftp", "provider \"q\" {\n  base_url = \"ftp://127.0.0.1/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", `uses the scheme "ftp": only http:// and https://`, "4:14", false},
		{"base_url no host", "provider \"q\" {\n  base_url = \"http:///v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "has no host", "4:14", false},
		{"base_url opaque", "provider \"q\" {\n  base_url = \"http:127.0.0.1/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "has no host", "4:14", false},
		{"base_url port only", "provider \"q\" {\n  base_url = \"http://:8080/v1\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "a port but no host name", "4:14", false},
		{"base_url fragment", "provider \"q\" {\n  base_url = \"http://127.0.0.1:8080/v1#x\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", "#fragment", "4:14", false},
		{"base_url credentials redacted", "provider \"q\" {\n  base_url = \"ftp://user:hunter22@h/v1?api-key=SECRET\"\n}\nagent \"a\" {}\n", nil,
			"Invalid base_url", `"ftp://REDACTED@h/v1?api-key=REDACTED" uses the scheme "ftp"`, "4:14", false},
		{"request_timeout unparsable", "provider \"q\" {\n  base_url        = \"http://x/v1\"\n  request_timeout = \"ten minutes\"\n}\nagent \"a\" {}\n", nil,
			"Invalid duration", `request_timeout: "ten minutes" is not a duration`, "5:21", false},
		{"request_timeout zero", "provider \"q\" {\n  base_url        = \"http://x/v1\"\n  request_timeout = \"0s\"\n}\nagent \"a\" {}\n", nil,
			"Invalid duration", "must be positive", "5:21", false},
		{"retry duration", "provider \"q\" {\n  base_url = \"http://x/v1\"\n  retry {\n    initial = \"1 sec\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid duration", `initial: "1 sec" is not a duration`, "6:15", false},
		{"retry attempts", "provider \"q\" {\n  base_url = \"http://x/v1\"\n  retry {\n    attempts = 0\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid attempts", "attempts = 1 disables retries", "6:16", false},
		{"idle_timeout negative", "provider \"q\" {\n  base_url     = \"http://x/v1\"\n  idle_timeout = \"-5s\"\n}\nagent \"a\" {}\n", nil,
			"Invalid duration", "must be positive", "5:18", false},
		{"temperature", "model \"x\" {\n  temperature = 3\n}\nagent \"a\" {\n  model = \"m\"\n}\n", nil,
			"Invalid temperature", "between 0 and 2", "4:17", false},
		{"unknown builtin", "plugin \"c\" {\n  source = \"builtin:cor\"\n}\nagent \"a\" {}\n", nil,
			"Unknown builtin plugin", `the builtins are "builtin:core". Did you mean "builtin:core"?`, "4:12", false},
		{"plugin file missing", "plugin \"jq\" {\n  source = \"plugins/jq.wasm\"\n}\nagent \"a\" {}\n", nil,
			"Plugin file not found", "source paths are relative to the config file's directory", "4:12", false},
		{"plugin source is a directory", "plugin \"jq\" {\n  source = \"plugins\"\n}\nagent \"a\" {}\n", map[string]string{"plugins/x": ""},
			"Plugin source is a directory", "source must name a .wasm file", "4:12", false},
		{"plugin not wasm", "plugin \"jq\" {\n  source = \"jq.wasm\"\n}\nagent \"a\" {}\n", map[string]string{"jq.wasm": "#!/bin/sh\necho hi\n"},
			"Not a WebAssembly file", `jq.wasm does not start with the WebAssembly magic bytes \0asm`, "4:12", false},
		{"plugin is a component of another kind", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  kind   = \"agenthost\"\n}\nagent \"a\" {}\n", map[string]string{"jq.wasm": string(component)},
			"Invalid kind", "jq.wasm is a WASI 0.2 component, not an agenthost plugin; set kind = \"component\" or remove kind", "5:12", false},
		{"plugin sha256 mismatch", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  sha256 = \"" + hash + "\"\n}\nagent \"a\" {}\n", wasmFiles,
			"Checksum mismatch", "jq.wasm has sha256 93a44bbb96c751218e4c00d479e4c14358122a389acca16205b1e4d0dc5f9476, but the config expects 0000000000000000000000000000000000000000000000000000000000000000", "5:12", false},
		{"plugin sha256 malformed", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  sha256 = \"abc\"\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid sha256", "64 hex digits", "5:12", false},
		{"plugin kind", "plugin \"c\" {\n  source = \"builtin:core\"\n  kind   = \"agenthst\"\n}\nagent \"a\" {}\n", nil,
			"Invalid kind", `kind must be one of "agenthost", "wasi_cli", "extism", "component", not "agenthst". Did you mean "agenthost"?`, "5:12", false},
		{"wasi_cli without tools", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  kind   = \"wasi_cli\"\n}\nagent \"a\" {}\n", wasmFiles,
			"No tools", "A wasi_cli plugin declares its tools in tool blocks", "3:1", false},
		{"tool without argv", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    description = \"jq\"\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Missing argv", `argv = ["jq", args.input]`, "5:3", false},
		{"tool block on agenthost plugin", "plugin \"c\" {\n  source = \"builtin:core\"\n  tool \"x\" {\n    argv = [\"x\"]\n  }\n}\nagent \"a\" {}\n", nil,
			"Tool block on an agenthost plugin", "tool blocks are only for kind = \"wasi_cli\" plugins", "5:3", false},
		{"wasi_cli tool name", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"j.q\" {\n    argv = [\"jq\"]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid tool name", `try "j_q"`, "5:8", false},
		{"duplicate wasi_cli tool", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv = [\"jq\"]\n  }\n  tool \"jq\" {\n    argv = [\"jq\"]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Duplicate tool", "already declared on line 5", "8:8", false},
		{"argv references other than args", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv = [\"jq\", arg.filter]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid reference", `can refer only to args, the call's arguments (e.g. args.input); "arg" is not defined there. Did you mean "args"?`, "6:19", false},
		{"argv unknown argument", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    input_schema = { type = \"object\", properties = { filter = { type = \"string\" } } }\n    argv = [\"jq\", args.fliter]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Unknown argument", `args.fliter is not a property of the tool's input_schema. Did you mean "filter"?`, "7:19", false},
		{"argv calls env", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv = [\"jq\", env(\"X\")]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Function not available here", "env and file run once at load time", "6:19", false},
		{"argv is a string", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv = \"jq -c .\"\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid argv", "never split by a shell", "6:12", false},
		{"argv element is an object", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv = [\"jq\", { a = 1 }]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid argv", "argv[1] must be a string", "6:19", false},
		{"stdin is an object", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    argv  = [\"jq\"]\n    stdin = { a = args.x }\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid stdin", "use jsonencode(...)", "7:13", false},
		{"input_schema not an object schema", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    input_schema = { type = \"string\" }\n    argv = [\"jq\"]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid input_schema", "type = \"object\"", "6:20", false},
		{"input_schema invalid", "plugin \"jq\" {\n  source = \"jq.wasm\"\n  tool \"jq\" {\n    input_schema = { type = \"object\", required = \"filter\" }\n    argv = [\"jq\"]\n  }\n}\nagent \"a\" {}\n", wasmFiles,
			"Invalid input_schema", "not a valid JSON Schema", "6:20", false},
		{"mount host missing", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \"nope\"\n    guest = \"/w\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Mount path not found", `Mount "w": the host directory`, "6:13", false},
		{"mount host is a file", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \"f\"\n    guest = \"/w\"\n  }\n}\nagent \"a\" {}\n", map[string]string{"f": "x"},
			"Mount path is not a directory", "a mount grants a directory", "6:13", false},
		{"mount guest relative", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \".\"\n    guest = \"workspace\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid guest path", `like "/workspace"`, "7:13", false},
		{"mount mode", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \".\"\n    guest = \"/w\"\n    mode  = \"write\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid mode", `mode must be one of "ro", "rw", not "write".`, "8:13", false},
		{"mount duplicate guest", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \".\"\n    guest = \"/w\"\n  }\n  mount \"v\" {\n    host  = \".\"\n    guest = \"/w/\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Duplicate guest path", "(line 7)", "11:13", false},
		{"limits size", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    memory = \"12 parsecs\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid size", `memory: "12 parsecs" is not a size`, "6:14", false},
		{"limits memory too small", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    memory = \"1KiB\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid memory limit", "between 64KiB (one WebAssembly page) and 4GiB", "6:14", false},
		{"limits duration", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    timeout = \"10x\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid duration", `timeout: "10x" is not a duration`, "6:15", false},
		{"limits max_output zero", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    max_output = \"0\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid max_output", "at least 1 byte", "6:18", false},
		{"ro mount inside a rw mount", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"w\" {\n    host  = \".\"\n    guest = \"/w\"\n    mode  = \"rw\"\n  }\n  mount \"docs\" {\n    host  = \"sub/docs\"\n    guest = \"/docs\"\n  }\n}\nagent \"a\" {}\n", map[string]string{"sub/docs/a.md": "x"},
			"Read-only mount inside a read-write one", `is inside the directory of mount "w" (line 6), which is read-write: the plugin could change it through /w/sub/docs. Make "w" read-only too`, "11:13", false},
		{"ro mount of the same directory as a rw mount", "plugin \"c\" {\n  source = \"builtin:core\"\n  mount \"docs\" {\n    host  = \"./sub/../sub\"\n    guest = \"/docs\"\n    mode  = \"ro\"\n  }\n  mount \"w\" {\n    host  = \"sub\"\n    guest = \"/w\"\n    mode  = \"rw\"\n  }\n}\nagent \"a\" {}\n", map[string]string{"sub/a.md": "x"},
			"Read-only mount inside a read-write one", `is the same directory as mount "w" (line 11)`, "6:13", false},
		{"limits max_write zero", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    max_write = \"0B\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid max_write", "at least 1 byte", "6:17", false},
		{"limits max_write unparsable", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    max_write = \"lots\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid size", `max_write: "lots" is not a size`, "6:17", false},
		{"limits max_files zero", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    max_files = 0\n  }\n}\nagent \"a\" {}\n", nil,
			"Invalid max_files", "at least 1 (the default is 10000), not 0", "6:17", false},
		{"limits max_files not a number", "plugin \"c\" {\n  source = \"builtin:core\"\n  limits {\n    max_files = \"many\"\n  }\n}\nagent \"a\" {}\n", nil,
			"Unsuitable value type", "a number is required", "6:18", false},
		{"env unset without default", "provider \"q\" {\n  base_url = env(\"MY_URL\")\n}\nagent \"a\" {}\n", nil,
			"Invalid function argument", `environment variable MY_URL is not set (or empty); set it (export MY_URL=...) or give a default: env("MY_URL", "")`, "4:19", false},
		{"file missing", "agent \"a\" {\n  prompt = file(\"prompts/a.md\")\n}\n", nil,
			"Invalid function argument", `no file "prompts/a.md"`, "4:18", false},
		{"unknown attribute", "agent \"a\" {\n  step = 3\n}\n", nil,
			"Unsupported argument", `An argument named "step" is not expected here. Did you mean "steps"?`, "4:3", false},
		{"unknown block", "agnet \"a\" {}\nagent \"b\" {}\n", nil,
			"Unsupported block type", `Did you mean "agent"?`, "3:1", false},
		{"approve bad pattern", "agent \"a\" {\n  approve = [\"[\"]\n}\n", nil,
			"Invalid approve pattern", `like "write_file" or "gh__*"`, "4:14", false},
		{"approve matches no tool", "agent \"a\" {\n  approve = [\"write_*\"]\n}\n", nil,
			"approve pattern matches no tool", "never asks", "4:14", true},
		{"output_schema not JSON", "agent \"a\" {\n  output_schema = \"{nope\"\n}\n", nil,
			"Invalid output_schema", "not valid JSON", "4:19", false},
		{"output_schema not a schema", "agent \"a\" {\n  output_schema = file(\"s.json\")\n}\n", map[string]string{"s.json": `{"type": 5}`},
			"Invalid output_schema", "not a valid JSON Schema", "4:19", false},
		{"output_schema a number", "agent \"a\" {\n  output_schema = 5\n}\n", nil,
			"Invalid output_schema", "file(\"schemas/answer.json\")", "4:19", false},
		{"output_schema loads a file", "agent \"a\" {\n  output_schema = { \"$ref\" = \"other.json\" }\n}\n", map[string]string{"other.json": `{}`},
			"Invalid output_schema", "not a valid JSON Schema", "4:19", false},
		{"structured_output unknown", "provider \"q\" {\n  base_url = \"http://127.0.0.1:2/v1\"\n  structured_output = \"json\"\n}\nagent \"a\" {}\n", nil,
			"Invalid structured_output", `one of "json_schema", "json_object", "prompt", not "json"`, "5:23", false},
		{"provider named mcp_client", "provider \"mcp_client\" {\n  base_url = \"http://127.0.0.1:2/v1\"\n}\nagent \"a\" {}\n", nil,
			"Reserved provider name", `names the MCP client that calls a served agent`, "3:10", false},
		{"mcp_client model without price under a cost limit", "model \"c\" {\n  provider = \"mcp_client\"\n}\nagent \"a\" {\n  model = \"c\"\n  cost  = 1\n}\n", nil,
			"Missing price", `model "c" has no price`, "8:11", false},
		{"one-line block with several attributes", "agent \"a\" {\n  doom_loop { threshold = 3  action = \"warn\" }\n}\n", nil,
			"Invalid single-argument block definition", "put each attribute on its own line", "4:30", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := parseIn(t, base+tc.src, tc.files)
			want := hcl.DiagError
			if tc.warning {
				want = hcl.DiagWarning
			}
			var got []*hcl.Diagnostic
			for _, d := range diags {
				if d.Severity == hcl.DiagError || d.Severity == want {
					got = append(got, d)
				}
			}
			if len(got) != 1 {
				t.Fatalf("want exactly one %s, got:%s", tc.summary, dump(diags))
			}
			d := got[0]
			if d.Severity != want || d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || pos(d) != tc.at {
				t.Errorf("got %s %q at %s: %s\nwant %q at %s with detail containing %q", map[bool]string{true: "warning", false: "error"}[d.Severity == hcl.DiagWarning], d.Summary, pos(d), d.Detail, tc.summary, tc.at, tc.detail)
			}
			if (cfg == nil) != !tc.warning {
				t.Errorf("cfg = %v; want nil exactly when there are errors", cfg)
			}
		})
	}
}

// TestMCPClientProvider checks a model with provider = "mcp_client": no
// provider block is needed, and the model keeps its other attributes.
func TestMCPClientProvider(t *testing.T) {
	cfg, diags := parseIn(t, "model \"c\" {\n  provider   = \"mcp_client\"\n  name       = \"claude\"\n  max_tokens = 100\n}\nagent \"a\" {\n  model = \"c\"\n}\n", nil)
	if diags.HasErrors() || cfg == nil {
		t.Fatalf("want a valid config, got:%s", dump(diags))
	}
	m := cfg.Model("c")
	if m.Provider != ProviderMCPClient || m.ID != "claude" || m.MaxTokens != 100 || len(cfg.Providers) != 0 {
		t.Errorf("model c = %+v, providers %d; want provider %q, name claude, max_tokens 100, no provider", m, len(cfg.Providers), ProviderMCPClient)
	}
}

// TestHostOtel checks host.otel: off by default, on with true.
func TestHostOtel(t *testing.T) {
	for src, want := range map[string]bool{
		"agent \"a\" {}\n":                            false,
		"host {\n  otel = true\n}\nagent \"a\" {}\n":  true,
		"host {\n  otel = false\n}\nagent \"a\" {}\n": false,
	} {
		cfg, diags := parseIn(t, base+src, nil)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", src, dump(diags))
		}
		if cfg.Host.Otel != want {
			t.Errorf("%q: Host.Otel = %v, want %v", src, cfg.Host.Otel, want)
		}
	}
}

// TestAllProblemsAtOnce checks that problems in different blocks are all
// reported, in file order.
func TestAllProblemsAtOnce(t *testing.T) {
	src := base + `agent "a" {
  steps  = 0
  budget = 0
  model  = "nope"
}
agent "b" {
  subagents = ["zzz"]
}
`
	_, diags := parseIn(t, src, nil)
	want := []string{"4:12 Invalid steps", "5:12 Invalid budget", "6:12 Unknown model", "9:16 Unknown subagent"}
	var got []string
	for _, d := range diags {
		got = append(got, pos(d)+" "+d.Summary)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDecodeErrorReportedOnce checks that a value that fails to decode is not
// reported a second time by validation.
func TestDecodeErrorReportedOnce(t *testing.T) {
	src := base + `plugin "c" {
  source = "builtin:core"
  limits {
    timeout = env("NOPE")
  }
  mount "w" {
    host  = env("NOPE")
    guest = "/w"
  }
}
agent "a" {}
`
	_, diags := parseIn(t, src, nil)
	if len(diags) != 2 {
		t.Fatalf("want two env errors, got:%s", dump(diags))
	}
	for _, d := range diags {
		if d.Summary != "Invalid function argument" {
			t.Errorf("unexpected %s", dump(hcl.Diagnostics{d}))
		}
	}
}

// TestApproveAndOutputSchema: approve and output_schema decode into the
// agent, the schema from a file or an object as compact JSON;
// structured_output defaults to json_schema.
func TestApproveAndOutputSchema(t *testing.T) {
	src := base + `agent "a" {
  subagents = ["b"]
  approve   = ["b", "b*"]
  output_schema = file("s.json")
}
agent "b" {
  output_schema = { type = "object", required = ["x"] }
}
`
	cfg, diags := parseIn(t, src, map[string]string{"s.json": "{\n  \"type\": \"string\"\n}\n"})
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	a, b := cfg.Agent("a"), cfg.Agent("b")
	if strings.Join(a.Approve, ",") != "b,b*" || string(a.OutputSchema) != `{"type":"string"}` {
		t.Errorf("agent a: approve %q, output_schema %s", a.Approve, a.OutputSchema)
	}
	if string(b.OutputSchema) != `{"required":["x"],"type":"object"}` || b.Approve != nil {
		t.Errorf("agent b: approve %q, output_schema %s", b.Approve, b.OutputSchema)
	}
	if p := cfg.Providers[0].StructuredOutput; p != StructuredJSONSchema {
		t.Errorf("structured_output default %q", p)
	}
}
