package plugins_test

// These tests run the embedded core.wasm (and the example echo plugin, built
// from source) in a real wazero runtime speaking agenthost/1, with a host
// directory mounted at /workspace, the way the host does it (minus the
// host's own sandbox code, which has its own tests in host/plugin).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/internal/wasmbuild"
	"github.com/agenthost/agenthost/plugins"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

var (
	rtOnce sync.Once
	rt     wazero.Runtime
	coreCM wazero.CompiledModule
	rtErr  error
)

// coreModule compiles core.wasm once per test binary.
func coreModule(t testing.TB) (wazero.Runtime, wazero.CompiledModule) {
	t.Helper()
	rtOnce.Do(func() {
		ctx := context.Background()
		rt = wazero.NewRuntime(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		wasm, _ := plugins.Builtin("core")
		coreCM, rtErr = rt.CompileModule(ctx, wasm)
	})
	if rtErr != nil {
		t.Fatalf("compiling core.wasm: %v", rtErr)
	}
	return rt, coreCM
}

type outcome struct {
	code           uint32
	stdout, stderr string
}

// runGuest instantiates cm once with the given environment and stdin, and a
// mount of dir at /workspace when dir is not "".
func runGuest(t *testing.T, r wazero.Runtime, cm wazero.CompiledModule, dir string, env map[string]string, stdin string) outcome {
	t.Helper()
	return runGuestFS(t, r, cm, dir, false, env, stdin)
}

func runGuestFS(t *testing.T, r wazero.Runtime, cm wazero.CompiledModule, dir string, readOnly bool, env map[string]string, stdin string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("plugin").
		WithStdin(strings.NewReader(stdin)).WithStdout(&stdout).WithStderr(&stderr)
	for k, v := range env {
		cfg = cfg.WithEnv(k, v)
	}
	switch {
	case dir != "" && readOnly:
		cfg = cfg.WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(dir, "/workspace"))
	case dir != "":
		cfg = cfg.WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/workspace"))
	}
	mod, err := r.InstantiateModule(context.Background(), cm, cfg)
	var code uint32
	var exit *sys.ExitError
	switch {
	case err == nil:
		mod.Close(context.Background())
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running the plugin: %v (stderr %q)", err, stderr.String())
	}
	return outcome{code, stdout.String(), stderr.String()}
}

type callResult struct {
	Content []struct{ Type, Text string } `json:"content"`
	IsError bool                          `json:"is_error"`
}

func callCore(t *testing.T, dir, tool, args string) (callResult, uint32) {
	t.Helper()
	r, cm := coreModule(t)
	stdin := `{"tool":"` + tool + `","arguments":` + args + `,"call_id":"call_1"}`
	out := runGuest(t, r, cm, dir, map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": tool}, stdin)
	var res callResult
	if err := json.Unmarshal([]byte(out.stdout), &res); err != nil {
		t.Fatalf("%s %s: exit %d, stdout %q is not a result: %v (stderr %q)", tool, args, out.code, out.stdout, err, out.stderr)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("%s %s: content %+v, want one text item", tool, args, res.Content)
	}
	return res, out.code
}

func TestCoreDescribeInWazero(t *testing.T) {
	r, cm := coreModule(t)
	out := runGuest(t, r, cm, "", map[string]string{"AGENTHOST_MODE": "describe"}, "")
	if out.code != 0 {
		t.Fatalf("describe exit %d, stderr %q", out.code, out.stderr)
	}
	var m struct {
		Protocol string
		Tools    []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out.stdout), &m); err != nil || m.Protocol != "agenthost/1" || len(m.Tools) != 5 {
		t.Fatalf("describe printed %q (%v)", out.stdout, err)
	}
}

// TestCoreToolsInWazero walks through a small session: write, read, edit,
// list and search, all through the /workspace mount.
func TestCoreToolsInWazero(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		tool, args, want string
	}{
		{"write_file", `{"path":"src/main.go","content":"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"}`, "created src/main.go (45 bytes)"},
		{"read_file", `{"path":"src/main.go","offset":4,"limit":1}`, "     4\t\tprintln(\"hi\")\n(showing lines 4-4 of 5; call read_file with offset 5 to continue)\n"},
		{"edit", `{"path":"/workspace/src/main.go","old_string":"\"hi\"","new_string":"\"hello\""}`, "edited src/main.go: replaced 1 occurrence at line 4"},
		{"list_dir", `{"recursive":true}`, "src/\nsrc/main.go\n"},
		{"search", `{"pattern":"hel+o","regexp":true}`, "src/main.go:4: \tprintln(\"hello\")\n"},
	}
	for _, s := range steps {
		res, code := callCore(t, dir, s.tool, s.args)
		if code != 0 || res.IsError || res.Content[0].Text != s.want {
			t.Fatalf("%s %s: exit %d, result %+v; want %q", s.tool, s.args, code, res, s.want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "src/main.go"))
	if err != nil || !strings.Contains(string(b), `println("hello")`) {
		t.Fatalf("host file = %q, %v", b, err)
	}
}

func TestCoreToolErrorsInWazero(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(filepath.Dir(dir), "secret-"+filepath.Base(dir))
	if err := os.WriteFile(secret, []byte("TOPSECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(secret) })
	if err := os.WriteFile(filepath.Join(dir, "dup.txt"), []byte("x x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"missing.txt"}`, "missing.txt: not found"},
		{"read_file", `{"path":"../` + filepath.Base(secret) + `"}`, "is outside /workspace"},
		{"read_file", `{"path":"/etc/passwd"}`, "is outside /workspace"},
		{"list_dir", `{"path":"dup.txt"}`, "dup.txt: not a directory"},
		{"edit", `{"path":"dup.txt","old_string":"x","new_string":"y"}`, "found 2 times, make old_string unique"},
	} {
		res, code := callCore(t, dir, tc.tool, tc.args)
		if code != 1 || !res.IsError || !strings.Contains(res.Content[0].Text, tc.want) {
			t.Errorf("%s %s: exit %d, result %+v; want exit 1 and %q", tc.tool, tc.args, code, res, tc.want)
		}
		if strings.Contains(res.Content[0].Text, "TOPSECRET") {
			t.Errorf("%s %s leaked the secret", tc.tool, tc.args)
		}
	}
}

// TestCoreWithoutMount checks that with no mount granted the tools fail with
// a tool error, not a crash.
func TestCoreWithoutMount(t *testing.T) {
	res, code := callCore(t, "", "list_dir", `{}`)
	if code != 1 || !res.IsError || !strings.Contains(res.Content[0].Text, "no file system is mounted at /workspace") {
		t.Fatalf("exit %d, result %+v", code, res)
	}
}

// TestCoreReadOnlyMount checks that writes on a read-only mount are tool
// errors that say so, and that reading still works.
func TestCoreReadOnlyMount(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, cm := coreModule(t)
	call := func(tool, args string) (callResult, uint32) {
		out := runGuestFS(t, r, cm, dir, true, map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": tool},
			`{"tool":"`+tool+`","arguments":`+args+`}`)
		var res callResult
		if err := json.Unmarshal([]byte(out.stdout), &res); err != nil || len(res.Content) != 1 {
			t.Fatalf("%s: %+v (%v)", tool, out, err)
		}
		return res, out.code
	}
	for _, tc := range []struct{ tool, args string }{
		{"write_file", `{"path":"a.txt","content":"new"}`},
		{"write_file", `{"path":"sub/b.txt","content":"new"}`},
		{"edit", `{"path":"a.txt","old_string":"old","new_string":"new"}`},
	} {
		res, code := call(tc.tool, tc.args)
		if code != 1 || !res.IsError || !strings.Contains(res.Content[0].Text, "read-only") {
			t.Errorf("%s %s: exit %d, result %+v; want a read-only error", tc.tool, tc.args, code, res)
		}
	}
	if res, code := call("read_file", `{"path":"a.txt"}`); code != 0 || res.Content[0].Text != "     1\told\n" {
		t.Errorf("read_file on a read-only mount: exit %d, %+v", code, res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt = %q after refused writes", b)
	}
}

func TestCoreMisuseInWazero(t *testing.T) {
	r, cm := coreModule(t)
	out := runGuest(t, r, cm, "", map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": "read_file"}, "not json")
	if out.code != 2 || out.stdout != "" || !strings.Contains(out.stderr, "not a JSON object") {
		t.Fatalf("got %+v, want exit 2 with a message on stderr", out)
	}
}

// TestEchoExample builds examples/echo for wasip1 and runs it, so the
// example in the docs keeps working.
func TestEchoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	wasmPath := filepath.Join(t.TempDir(), "echo.wasm")
	if err := wasmbuild.Build(wasmPath, filepath.Join("..", "examples", "echo")); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := coreModule(t) // shares the runtime
	cm, err := r.CompileModule(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(context.Background())

	out := runGuest(t, r, cm, "", map[string]string{"AGENTHOST_MODE": "describe"}, "")
	if out.code != 0 || !strings.Contains(out.stdout, `"protocol": "agenthost/1"`) {
		t.Fatalf("describe: %+v", out)
	}
	out = runGuest(t, r, cm, "", map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": "echo"},
		`{"tool":"echo","arguments":{"text":"ping"},"call_id":"c"}`)
	var res callResult
	if err := json.Unmarshal([]byte(out.stdout), &res); err != nil || out.code != 0 || res.IsError || res.Content[0].Text != "ping" {
		t.Fatalf("call: %+v (%v)", out, err)
	}
}

// BenchmarkCoreCall measures one read_file call on a fresh instance of the
// compiled core.wasm (instantiation, the guest's start, the call, exit).
func BenchmarkCoreCall(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r, cm := coreModule(b)
	ctx := context.Background()
	env := wazero.NewModuleConfig().WithName("").WithArgs("core").
		WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_TOOL", "read_file").
		WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/workspace"))
	b.ResetTimer()
	for b.Loop() {
		var stdout bytes.Buffer
		cfg := env.WithStdin(strings.NewReader(`{"tool":"read_file","arguments":{"path":"a.txt"},"call_id":"b"}`)).WithStdout(&stdout)
		mod, err := r.InstantiateModule(ctx, cm, cfg)
		var exit *sys.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 0) {
			b.Fatal(err)
		}
		if mod != nil {
			mod.Close(ctx)
		}
		if !strings.Contains(stdout.String(), "hello") {
			b.Fatalf("stdout %q", stdout.String())
		}
	}
}
