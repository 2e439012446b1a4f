package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

func call(t testing.TB, p *Plugin, tool, args string) (loop.ToolResult, error) {
	t.Helper()
	return p.Call(context.Background(), loop.ToolCall{ID: "c1", Name: tool, Arguments: args})
}

func mustCall(t testing.TB, p *Plugin, tool, args string) loop.ToolResult {
	t.Helper()
	res, err := call(t, p, tool, args)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func TestEchoDescribeAndCall(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, spec(t, "echo", guests["echo"]))
	if p.Kind() != KindAgenthost || p.ah.manifestSource != "describe" {
		t.Fatalf("kind %q source %q, want agenthost from describe", p.Kind(), p.ah.manifestSource)
	}
	if got := len(p.Tools()); got != 10 {
		t.Fatalf("%d tools, want 9", got)
	}
	if p.Tools()[3].Name != "soft_fail" || string(p.Tools()[3].InputSchema) != `{"type":"object"}` {
		t.Errorf("tool without schema: %+v, want default schema", p.Tools()[3])
	}
	// Cold, then warm (pre-started), then warm again: same results.
	for round := 0; round < 3; round++ {
		res := mustCall(t, p, "echo", `{"text":"hi"}`)
		if res.IsError || res.Content != "hi (call c1)" {
			t.Fatalf("round %d: %+v", round, res)
		}
	}
	tests := []struct {
		tool, args, want string
		isError          bool
	}{
		{"plain", `{"text":"x"}`, "plain: x", false},
		{"fail", `{"text":"bad"}`, "it failed: bad", true},
		{"soft_fail", ``, "soft failure", true},
	}
	for _, tc := range tests {
		res := mustCall(t, p, tc.tool, tc.args)
		if res.Content != tc.want || res.IsError != tc.isError {
			t.Errorf("%s: got %+v, want %q is_error=%v", tc.tool, res, tc.want, tc.isError)
		}
	}
}

func TestArgumentsCheckedBeforeRunning(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, spec(t, "echo", guests["echo"]))
	p.SetPrestart(false)
	before := r.started.Load()
	tests := []struct{ name, tool, args, want string }{
		{"not json", "echo", `{"text":`, "not valid JSON"},
		{"missing required", "echo", `{}`, "missing property 'text'"},
		{"extra property", "echo", `{"text":"a","x":1}`, "additional properties 'x' not allowed"},
		{"wrong type", "echo", `{"text":5}`, "want string"},
		{"unknown tool", "nope", `{}`, `has no tool "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustCall(t, p, tc.tool, tc.args)
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("got %+v, want an error result containing %q", res, tc.want)
			}
		})
	}
	if n := r.started.Load() - before; n != 0 {
		t.Errorf("%d instances started for invalid calls, want 0", n)
	}
}

// TestCallCheckedOwnCallsOnly: a plugin runs only the calls it checked
// itself; another plugin's checked call, or none, is an error result and
// starts nothing.
func TestCallCheckedOwnCallsOnly(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, spec(t, "echo", guests["echo"]))
	p.SetPrestart(false)
	other := load(t, r, spec(t, "echo2", guests["echo"]))
	other.SetPrestart(false)
	c, msg := other.Check(loop.ToolCall{ID: "c", Name: "echo", Arguments: `{"text":"a"}`}, map[string]any{"text": "a"})
	if msg != "" {
		t.Fatalf("Check: %s", msg)
	}
	before := r.started.Load()
	for _, c := range []Checked{c, {}} {
		if res, err := p.CallChecked(context.Background(), c); err != nil || !res.IsError || !strings.Contains(res.Content, "was not checked by this plugin") {
			t.Errorf("CallChecked of a call another plugin checked: %+v, %v", res, err)
		}
	}
	if n := r.started.Load() - before; n != 0 {
		t.Errorf("%d instances started, want 0", n)
	}
}

func TestGrantedEnvironment(t *testing.T) {
	r := newRuntime(t)
	cp := spec(t, "echo", guests["echo"])
	cp.Env = map[string]string{"TZ": "UTC", "UNREQUESTED": "x", "AGENTHOST_MODE": "evil"}
	p := load(t, r, cp)
	res := mustCall(t, p, "env", "")
	want := "AGENTHOST_MODE=call\nAGENTHOST_TOOL=env\nTZ=UTC"
	if res.Content != want {
		t.Errorf("environment:\n%s\nwant:\n%s", res.Content, want)
	}
	denied := strings.Join(p.Grants().Denied, "\n")
	for _, w := range []string{"env GREETING requested but not granted", "env UNREQUESTED granted but not requested", "fs /extra (ro) requested but no mount grants it"} {
		if !strings.Contains(denied, w) {
			t.Errorf("denied notes lack %q:\n%s", w, denied)
		}
	}
}

func TestClockAndRandom(t *testing.T) {
	r := newRuntime(t)
	fake := load(t, r, spec(t, "fake", guests["echo"]))
	a, b := mustCall(t, fake, "clock", ""), mustCall(t, fake, "clock", "")
	if a.Content != b.Content {
		t.Errorf("without grants, clock and random differ between calls: %q vs %q", a.Content, b.Content)
	}
	cp := spec(t, "real", guests["echo"])
	cp.Clock, cp.Random = true, true
	real := load(t, r, cp)
	c, d := mustCall(t, real, "clock", ""), mustCall(t, real, "clock", "")
	if c.Content == d.Content {
		t.Errorf("with grants, two calls gave the same time and randomness: %q", c.Content)
	}
	var ns int64
	if _, err := fmt.Sscan(c.Content, &ns); err != nil || time.Since(time.Unix(0, ns)).Abs() > time.Hour {
		t.Errorf("granted clock reads %q, want about now", c.Content)
	}
}

func TestMounts(t *testing.T) {
	s := newSandbox(t)
	r := newRuntime(t)
	cp := spec(t, "echo", guests["echo"])
	cp.Mounts = []Mount{{Name: "ws", Host: s.ws, Guest: "/workspace", Mode: MountRW}}
	p := load(t, r, cp)
	if res := mustCall(t, p, "read", `{"path":"/workspace/inside.txt"}`); res.IsError || res.Content != "inside content" {
		t.Errorf("read: %+v", res)
	}
	if res := mustCall(t, p, "write", `{"path":"/workspace/sub/new.txt","text":"new"}`); res.IsError {
		t.Errorf("write: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "sub", "new.txt")); err != nil || string(b) != "new" {
		t.Errorf("host file after write: %q, %v", b, err)
	}
	res := mustCall(t, p, "list", `{"path":"/workspace"}`)
	for _, name := range []string{"inside.txt", "sub", "abs_link"} {
		if !strings.Contains(res.Content, name) {
			t.Errorf("list lacks %s: %q", name, res.Content)
		}
	}

	// The manifest asks for rw; an HCL mount with mode ro wins.
	cp = spec(t, "echo-ro", guests["echo"])
	cp.Mounts = []Mount{{Name: "ws", Host: s.ws, Guest: "/workspace", Mode: MountRO}}
	ro := load(t, r, cp)
	if res := mustCall(t, ro, "write", `{"path":"/workspace/inside.txt","text":"changed"}`); !res.IsError {
		t.Errorf("write on a ro mount: %+v, want an error result", res)
	}
	if b, _ := os.ReadFile(filepath.Join(s.ws, "inside.txt")); string(b) != "inside content" {
		t.Errorf("ro mount: host file changed to %q", b)
	}

	// Without a mount there is no file system at all.
	none := load(t, r, spec(t, "echo-none", guests["echo"]))
	if res := mustCall(t, none, "read", `{"path":"/workspace/inside.txt"}`); !res.IsError {
		t.Errorf("read without a mount: %+v, want an error result", res)
	}
}

func TestCustomSectionManifest(t *testing.T) {
	m := `{"protocol":"agenthost/1","name":"sec","tools":[{"name":"echo","description":"from the section","input_schema":{"type":"object"}}]}`
	wasm := appendCustomSection(guests["echo"], ManifestSection, []byte(m))
	r := newRuntime(t)
	p := load(t, r, spec(t, "sec", wasm))
	if p.ah.manifestSource != "custom section" || len(p.Tools()) != 1 || p.Tools()[0].Description != "from the section" {
		t.Fatalf("source %q tools %+v", p.ah.manifestSource, p.Tools())
	}
	if res := mustCall(t, p, "echo", `{"text":"s"}`); res.Content != "s (call c1)" {
		t.Errorf("call: %+v", res)
	}
}

func TestWASICLI(t *testing.T) {
	r := newRuntime(t)
	cp := spec(t, "cli", guests["cli"])
	cp.Tools = []CLITool{
		{
			Name: "shout", Description: "upper-case stdin",
			InputSchema: json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"},"flag":{"type":"string"}}}`),
			Command: func(raw json.RawMessage) ([]string, []byte, error) {
				args, err := stringArgs(raw)
				flag, ok := args["flag"]
				if !ok {
					flag = "none"
				}
				return []string{"cli", "-n", flag}, []byte(args["text"]), err
			},
		},
		{
			Name: "fail", Description: "exit with a code",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Command: func(raw json.RawMessage) ([]string, []byte, error) {
				args, err := stringArgs(raw)
				code, ok := args["code"]
				if err == nil && !ok {
					err = errors.New("no code")
				}
				return []string{"cli", "--exit", code}, nil, err
			},
		},
	}
	p := load(t, r, cp)
	if p.Kind() != KindWASICLI || p.Manifest() != nil {
		t.Fatalf("kind %q manifest %v, want wasi_cli without manifest", p.Kind(), p.Manifest())
	}
	res := mustCall(t, p, "shout", `{"text":"hello","flag":"f"}`)
	if res.IsError || res.Content != "argv0=cli args=-n|f stdin=HELLO" {
		t.Errorf("shout: %+v", res)
	}
	res = mustCall(t, p, "fail", `{"code":3}`)
	if !res.IsError || !strings.Contains(res.Content, "exit code 3") || !strings.Contains(res.Content, "failing on purpose") || !strings.Contains(res.Content, "partial output") {
		t.Errorf("fail: %+v", res)
	}
	res = mustCall(t, p, "fail", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "cannot build the command line") {
		t.Errorf("argv error: %+v", res)
	}
}

func TestCallCanceled(t *testing.T) {
	r := newRuntime(t)
	cp := spec(t, "hostile", guests["hostile"])
	p := load(t, r, cp)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := p.Call(ctx, loop.ToolCall{ID: "x", Name: "loop", Arguments: "{}"})
	var f *sandbox.Failure
	if !errors.As(err, &f) || f.Kind != sandbox.FailureCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a canceled *sandbox.Failure wrapping context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestLoadAllOrderAndErrors(t *testing.T) {
	r := newRuntime(t)
	bad := spec(t, "broken", []byte("not wasm at all"))
	ps := []Spec{spec(t, "a", guests["echo"]), bad, spec(t, "c", guests["hostile"])}
	got, errs := r.LoadAll(context.Background(), ps)
	if len(errs) != 3 || errs[0] != nil || errs[2] != nil {
		t.Fatalf("errs = %v, want one error, for the second spec", errs)
	}
	if err := errs[1]; err == nil || !strings.Contains(err.Error(), `plugin "broken"`) || !strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Fatalf("errs[1] = %v, want one naming plugin broken", err)
	}
	if got[0] == nil || got[0].Name() != "a" || got[1] != nil || got[2] == nil || got[2].Name() != "c" {
		t.Fatalf("plugins out of spec order: %v", got)
	}
}

// TestSpecWithoutConfig: a Spec needs no file and no HCL: the module may be
// given as bytes, a wasi_cli tool's command line is a Go function, and a
// tool without one is refused at load.
func TestSpecWithoutConfig(t *testing.T) {
	r := newRuntime(t)
	s := Spec{Name: "cli", Wasm: guests["cli"], Kind: KindWASICLI, Tools: []CLITool{{
		Name: "say",
		Command: func(args json.RawMessage) ([]string, []byte, error) {
			return []string{"cli", "-n", "x"}, args, nil
		},
	}}}
	p := load(t, r, s)
	if res := mustCall(t, p, "say", `{"a":1}`); res.IsError || res.Content != `argv0=cli args=-n|x stdin={"A":1}` {
		t.Errorf("say: %+v", res)
	}
	if l := p.Limits(); l.Memory == 0 || l.Timeout == 0 || l.MaxOutput == 0 || l.MaxWrite == 0 || l.MaxFiles == 0 {
		t.Errorf("limits %+v: a zero limit was not given its default", l)
	}
	s.Tools[0].Command = nil
	if _, err := r.Load(context.Background(), s); err == nil || !strings.Contains(err.Error(), `tool "say" has no command line`) {
		t.Errorf("tool without a command: err = %v", err)
	}
}

func TestSHA256Pin(t *testing.T) {
	r := newRuntime(t)
	cp := spec(t, "echo", guests["echo"])
	cp.SHA256 = strings.Repeat("0", 64)
	if _, err := r.Load(context.Background(), cp); err == nil || !strings.Contains(err.Error(), "but the config expects") {
		t.Fatalf("err = %v, want a sha256 mismatch", err)
	}
}

func TestBuiltinCore(t *testing.T) {
	r := newRuntime(t)
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the host\n"), 0o644))
	p := load(t, r, Spec{Name: "core", Builtin: "core",
		Mounts: []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRO}}})
	if p.Kind() != KindAgenthost || len(p.Tools()) == 0 {
		t.Fatalf("core: kind %q, %d tools", p.Kind(), len(p.Tools()))
	}
	res := mustCall(t, p, "read_file", `{"path":"hello.txt"}`)
	if res.IsError || !strings.Contains(res.Content, "hello from the host") {
		t.Errorf("read_file: %+v", res)
	}
}

func TestCompilationCacheOnDisk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		r, err := NewRuntime(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Load(ctx, spec(t, "cli", guests["cli"])); err == nil {
			t.Fatal("cli without tool blocks loaded; want a kind detection error")
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var files int
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Error("no files in the compilation cache directory")
	}
}

func TestCloseStopsPrestarted(t *testing.T) {
	r, err := NewRuntime(context.Background(), cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, r, spec(t, "echo", guests["echo"]))
	mustCall(t, p, "echo", `{"text":"a"}`) // leaves a pre-started instance
	if len(p.byName["echo"].warm) != 1 {
		t.Fatal("no pre-started instance after a call")
	}
	start := time.Now()
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("close took %v", d)
	}
	if _, err := call(t, p, "echo", `{"text":"a"}`); !errors.Is(err, errClosed) {
		t.Errorf("call after close: err = %v, want errClosed", err)
	}
}
