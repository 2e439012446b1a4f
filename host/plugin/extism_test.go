package plugin

import (
	"context"
	enc "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/wasmbuild"
	"github.com/agenthost/agenthost/loop"
)

// goSDKVersion is the github.com/extism/go-sdk release whose test plugins
// (folder wasm/) the tests run: real third-party Extism plugins. They are
// fetched with `go mod download` into the module cache, not required by
// go.mod; without the module (offline, empty cache) those tests skip.
const goSDKVersion = "v1.7.1"

var (
	sdkOnce sync.Once
	sdkDir  string
	sdkErr  error
)

// sdkWasm returns a test plugin of go-sdk, or skips the test.
func sdkWasm(t testing.TB, name string) []byte {
	t.Helper()
	sdkOnce.Do(func() {
		out, err := exec.Command(wasmbuild.GoTool(), "mod", "download", "-json", "github.com/extism/go-sdk@"+goSDKVersion).Output()
		var info struct{ Dir, Error string }
		if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
			err = errors.New(info.Error)
		}
		sdkDir, sdkErr = info.Dir, err
		if err == nil && info.Dir == "" {
			sdkErr = errors.New("go mod download reported no directory")
		}
	})
	if sdkErr != nil {
		t.Skipf("github.com/extism/go-sdk@%s is not available (offline?): %v", goSDKVersion, sdkErr)
	}
	b, err := os.ReadFile(filepath.Join(sdkDir, "wasm", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	mcpOnce  sync.Once
	mcpWasm  = map[string][]byte{}
	mcpBuild error
)

// mcpPlugin returns testdata/extism_mcp built for dialect "v1" or "v2".
func mcpPlugin(t testing.TB, v string) []byte {
	t.Helper()
	mcpOnce.Do(func() {
		dir := filepath.Dir(cacheDir)
		for _, tag := range []string{"v1", "v2"} {
			out := filepath.Join(dir, "extism_mcp_"+tag+".wasm")
			if err := wasmbuild.BuildWith([]string{"-buildmode=c-shared", "-tags", tag}, out, filepath.Join("testdata", "extism_mcp")); err != nil {
				mcpBuild = err
				return
			}
			b, err := os.ReadFile(out)
			if err != nil {
				mcpBuild = err
				return
			}
			mcpWasm[tag] = b
		}
	})
	if mcpBuild != nil {
		t.Fatal(mcpBuild)
	}
	return mcpWasm[v]
}

// inputTool is a plain-dialect tool whose input is the argument "text".
func inputTool(name, function string) CLITool {
	return CLITool{
		Name: name, Function: function,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Command: func(args json.RawMessage) ([]string, []byte, error) {
			var a struct{ Text string }
			err := json.Unmarshal(args, &a)
			return nil, []byte(a.Text), err
		},
	}
}

func extismSpec(t testing.TB, name string, wasm []byte, tools ...CLITool) Spec {
	s := spec(t, name, wasm)
	s.Kind = KindExtism
	s.Tools = tools
	return s
}

func TestExtismCountVowels(t *testing.T) {
	r := newRuntime(t)
	s := extismSpec(t, "vowels", sdkWasm(t, "count_vowels.wasm"), inputTool("count_vowels", ""))
	s.Kind = "" // detected from the imports
	p := load(t, r, s)
	if p.Kind() != KindExtism || p.Dialect() != DialectPlain {
		t.Fatalf("kind %q dialect %q, want extism plain", p.Kind(), p.Dialect())
	}
	for _, c := range []struct {
		in   string
		want int
	}{{"hello world", 3}, {"aaaaaa", 6}, {"", 0}, {"bbbbbbb", 0}} {
		// Several calls: the first cold, the next in pre-started instances.
		res := mustCall(t, p, "count_vowels", fmt.Sprintf(`{"text":%q}`, c.in))
		var out struct{ Count int }
		if res.IsError || json.Unmarshal([]byte(res.Content), &out) != nil || out.Count != c.want {
			t.Errorf("count_vowels(%q) = %+v, want count %d", c.in, res, c.want)
		}
	}
	if n := r.started.Load(); n < 4 {
		t.Errorf("%d instances started", n)
	}
}

func TestExtismConfig(t *testing.T) {
	r := newRuntime(t)
	s := extismSpec(t, "cfg", sdkWasm(t, "config.wasm"), inputTool("run_test", ""))
	s.Config = map[string]string{"thing": "hello"}
	res := mustCall(t, load(t, r, s), "run_test", `{}`)
	if res.IsError || res.Content != `{"config": "hello"}` {
		t.Fatalf("got %+v", res)
	}
	s.Config = nil
	res = mustCall(t, load(t, r, s), "run_test", `{}`)
	if res.Content != `{"config": "<unset by host>"}` {
		t.Fatalf("without config: got %+v", res)
	}
}

// TestExtismVars: vars persist across calls of a plugin, each in its own
// instance, as in Extism (var.wasm doubles var "a").
func TestExtismVars(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, extismSpec(t, "var", sdkWasm(t, "var.wasm"), inputTool("run_test", "")))
	p.ext.k.SetVar("a", enc.LittleEndian.AppendUint32(nil, 10))
	for _, want := range []uint32{20, 40} {
		if res := mustCall(t, p, "run_test", `{}`); res.IsError {
			t.Fatalf("got %+v", res)
		}
		if got := enc.LittleEndian.Uint32(p.ext.k.Var("a")); got != want {
			t.Fatalf("var a = %d, want %d", got, want)
		}
	}
}

func TestExtismFailAndExit(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, extismSpec(t, "fail", sdkWasm(t, "fail.wasm"), inputTool("run_test", "")))
	res := mustCall(t, p, "run_test", `{}`)
	if !res.IsError || res.Content != "Some error message" {
		t.Fatalf("fail.wasm: got %+v", res)
	}
	s := extismSpec(t, "exit", sdkWasm(t, "exit.wasm"), inputTool("exit", "_start"))
	s.Config = map[string]string{"code": "500"}
	res = mustCall(t, load(t, r, s), "exit", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "exited with code 500") {
		t.Fatalf("exit.wasm code 500: got %+v", res)
	}
	s.Config = map[string]string{"code": "0"}
	if res = mustCall(t, load(t, r, s), "exit", `{}`); res.IsError {
		t.Fatalf("exit.wasm code 0: got %+v", res)
	}
	// The plugin still works after its failures.
	if res := mustCall(t, p, "run_test", `{}`); res.Content != "Some error message" {
		t.Fatalf("second call: %+v", res)
	}
}

func TestExtismHelloAllocLog(t *testing.T) {
	r := newRuntime(t)
	for _, name := range []string{"hello.wasm", "alloc.wasm", "log.wasm"} {
		p := load(t, r, extismSpec(t, name, sdkWasm(t, name), inputTool("run_test", "")))
		res := mustCall(t, p, "run_test", `{}`)
		if res.IsError || (name == "hello.wasm" && res.Content != "Hello, world!") {
			t.Errorf("%s: %+v", name, res)
		}
	}
}

func TestExtismSleepTimeout(t *testing.T) {
	r := newRuntime(t)
	s := extismSpec(t, "sleep", sdkWasm(t, "sleep.wasm"), inputTool("run_test", ""))
	s.Config = map[string]string{"duration": "60000"}
	s.Clock = true
	s.Limits.Timeout = 300 * time.Millisecond
	p := load(t, r, s)
	_, err := call(t, p, "run_test", `{}`)
	var f *sandbox.Failure
	if !errors.As(err, &f) || f.Kind != sandbox.FailureTimeout {
		t.Fatalf("want a timeout failure, got %v", err)
	}
}

// TestExtismHTTPAllowlist runs go-sdk's http_headers.wasm (GET of the URL
// in its input) against loopback servers.
func TestExtismHTTPAllowlist(t *testing.T) {
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the plugin reached a server outside its allow list: %s", r.URL)
	}))
	defer outside.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, outside.URL+"/secret", http.StatusFound)
			return
		}
		w.Header().Set("X-Test", "yes")
	}))
	defer allowed.Close()

	r := newRuntime(t)
	tool := CLITool{Name: "http_get", Function: "http_get", Command: func(args json.RawMessage) ([]string, []byte, error) {
		return nil, args, nil
	}}
	s := extismSpec(t, "http", sdkWasm(t, "http_headers.wasm"), tool)
	s.HTTPAllow = []string{allowed.URL}
	p := load(t, r, s)
	res := mustCall(t, p, "http_get", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/ok"))
	if res.IsError || !strings.Contains(res.Content, `"x-test":"yes"`) {
		t.Fatalf("allowed: %+v", res)
	}
	res = mustCall(t, p, "http_get", fmt.Sprintf(`{"url":%q}`, outside.URL+"/x"))
	if !res.IsError || !strings.Contains(res.Content, "not in the plugin's http allow list") {
		t.Fatalf("outside: %+v", res)
	}
	res = mustCall(t, p, "http_get", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/redirect"))
	if !res.IsError || !strings.Contains(res.Content, "redirect to "+outside.URL+"/secret refused") {
		t.Fatalf("redirect: %+v", res)
	}
	// No http block: no network at all.
	s.HTTPAllow = nil
	res = mustCall(t, load(t, r, s), "http_get", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/ok"))
	if !res.IsError || !strings.Contains(res.Content, "refused") {
		t.Fatalf("no http block: %+v", res)
	}
}

// TestExtismHTTPRedactsURLs: the URL of a refused redirect (a presigned
// URL: user info and a signature in its query) and of a failed request
// reach the model's result and the log with their user info and query
// values replaced by REDACTED, the rule of every URL agenthost prints.
func TestExtismHTTPRedactsURLs(t *testing.T) {
	const presigned = "http://alice:topsecretpw@203.0.113.9/object?X-Amz-Credential=AKIDEXAMPLE&X-Amz-Signature=sig0123456789"
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, presigned, http.StatusFound)
		case "/drop": // the connection is closed without an answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	defer allowed.Close()

	r := newRuntime(t)
	tool := CLITool{Name: "http_get", Function: "http_get", Command: func(args json.RawMessage) ([]string, []byte, error) {
		return nil, args, nil
	}}
	s := extismSpec(t, "http", sdkWasm(t, "http_headers.wasm"), tool)
	s.HTTPAllow = []string{allowed.URL}
	p := load(t, r, s)
	var logs strings.Builder
	var mu sync.Mutex
	ctx := zerolog.New(lockedWriter{&mu, &logs}).WithContext(context.Background())
	secrets := []string{"alice", "topsecretpw", "AKIDEXAMPLE", "sig0123456789", "sEcReT-pass"}
	for _, c := range []struct{ url, want string }{
		{allowed.URL + "/redirect", "HTTP redirect to http://REDACTED@203.0.113.9/object?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED refused"},
		{strings.Replace(allowed.URL, "http://", "http://alice:sEcReT-pass@", 1) + "/drop?token=sig0123456789", "http_request to http://REDACTED@127.0.0.1"},
	} {
		res, err := p.Call(ctx, loop.ToolCall{ID: "c1", Name: "http_get", Arguments: fmt.Sprintf(`{"url":%q}`, c.url)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: result %q, want an error naming %q", c.url, res.Content, c.want)
		}
		if testing.Verbose() {
			t.Logf("%s: %s", c.url, res.Content)
		}
		for _, sec := range secrets {
			if strings.Contains(res.Content, sec) {
				t.Errorf("%s: the result has %q: %s", c.url, sec, res.Content)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), `"url":"http://REDACTED@203.0.113.9/object?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED"`) {
		t.Errorf("no redacted redirect URL in the log:\n%s", logs.String())
	}
	for _, sec := range secrets {
		if strings.Contains(logs.String(), sec) {
			t.Errorf("the log has %q:\n%s", sec, logs.String())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func testDialect(t *testing.T, v string, want Dialect) {
	r := newRuntime(t)
	s := extismSpec(t, "mcp", mcpPlugin(t, v))
	s.Kind = ""
	s.Config = map[string]string{"colour": "blue"}
	// A small memory limit ends the bombs quickly; the timeout leaves them
	// room under the race detector.
	s.Limits.Memory = 32 << 20
	s.Limits.Timeout = 5 * time.Second
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "note.txt"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte("outside"), 0o644))
	s.Mounts = []Mount{{Name: "data", Host: dir, Guest: "/data"}}
	p := load(t, r, s)
	if p.Kind() != KindExtism || p.Dialect() != want || len(p.Tools()) != 12 {
		t.Fatalf("kind %q dialect %q tools %d", p.Kind(), p.Dialect(), len(p.Tools()))
	}
	check := func(tool, args string, isErr bool, sub string) {
		t.Helper()
		res := mustCall(t, p, tool, args)
		if res.IsError != isErr || !strings.Contains(res.Content, sub) {
			t.Errorf("%s: got %+v, want isError %v and %q", tool, res, isErr, sub)
		}
	}
	check("greet", `{"name":"ada"}`, false, "hello, ada")
	check("greet", `{"name":"bob"}`, false, "hello, bob") // pre-started
	check("config", `{"key":"colour"}`, false, "blue")
	check("image", `{}`, false, "here it is\n[image content (image/png, 4000B of base64) omitted]")
	check("soft_fail", `{}`, true, "it went wrong")
	check("read", `{"path":"/data/note.txt"}`, false, "inside")
	check("read", `{"path":"/data/../secret.txt"}`, true, "")
	if res := mustCall(t, p, "read", `{"path":"/data/../secret.txt"}`); strings.Contains(res.Content, "outside") {
		t.Errorf("escaped the mount: %+v", res)
	}
	check("fetch", `{"url":"http://127.0.0.1:1/"}`, true, "not in the plugin's http allow list")

	failures := []struct {
		tool string
		kind sandbox.FailureKind
	}{
		{"spin", sandbox.FailureTimeout},
		{"bomb", sandbox.FailureMemory},
		{"kernel_bomb", sandbox.FailureMemory},
		{"flood", sandbox.FailureOutput},
		{"panic", sandbox.FailureTrap}, // a Go reactor's panic traps
	}
	for _, f := range failures {
		_, err := call(t, p, f.tool, `{}`)
		var fl *sandbox.Failure
		if !errors.As(err, &fl) || fl.Kind != f.kind {
			t.Errorf("%s: want a %s failure, got %v", f.tool, f.kind, err)
		}
		// The next call works.
		check("greet", `{"name":"again"}`, false, "hello, again")
	}
}

func TestExtismMCPRun(t *testing.T)     { testDialect(t, "v1", DialectMCPRun) }
func TestExtismHyperMCPv2(t *testing.T) { testDialect(t, "v2", DialectHyperMCP2) }

func TestExtismInspect(t *testing.T) {
	r := newRuntime(t)
	info, err := Inspect(context.Background(), r, mcpPlugin(t, "v2"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != KindExtism || info.Dialect != DialectHyperMCP2 || len(info.Tools) != 12 || len(info.Problems) != 0 {
		t.Fatalf("%+v", info)
	}
	info, err = Inspect(context.Background(), r, sdkWasm(t, "count_vowels.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != KindExtism || info.Dialect != DialectPlain || !strings.Contains(info.String(), "dialect:  plain") {
		t.Fatalf("%+v", info)
	}
}

func TestExtismLoadErrors(t *testing.T) {
	r := newRuntime(t)
	for _, c := range []struct {
		name string
		spec Spec
		want string
	}{
		{"no tools", extismSpec(t, "x", sdkWasm(t, "count_vowels.wasm")), "declare them with tool blocks"},
		{"missing export", extismSpec(t, "x", sdkWasm(t, "count_vowels.wasm"), inputTool("nope", "")), `exports no function "nope"; its exports are: count_vowels`},
		{"declared wasi_cli", func() Spec {
			s := extismSpec(t, "x", sdkWasm(t, "count_vowels.wasm"), inputTool("count_vowels", ""))
			s.Kind = KindWASICLI
			return s
		}(), `set kind = "extism"`},
		{"bad allow", func() Spec {
			s := extismSpec(t, "x", sdkWasm(t, "count_vowels.wasm"), inputTool("count_vowels", ""))
			s.HTTPAllow = []string{"github.com"}
			return s
		}(), "must be an origin"},
	} {
		_, err := r.Load(context.Background(), c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestExtismHyperMCPRefusedImport: a hyper-mcp v2 plugin importing a
// hyper-mcp host function agenthost does not provide (list_roots) is
// refused at load, naming the import, why, and what is provided.
func TestExtismHyperMCPRefusedImport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "roots.wasm")
	if err := wasmbuild.BuildWith([]string{"-buildmode=c-shared", "-tags", "v2 roots"}, out, filepath.Join("testdata", "extism_mcp")); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t)
	_, err = r.Load(context.Background(), extismSpec(t, "roots", wasm))
	want := "extism:host/user.list_roots is a hyper-mcp host function agenthost does not provide (agenthost offers plugins no client roots); it provides create_elicitation, create_message, notify_logging_message, notify_progress, notify_prompt_list_changed, notify_resource_list_changed, notify_resource_updated, notify_tool_list_changed"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// TestExtismHyperMCPToolListChanged: a plugin importing hyper-mcp's
// notify_tool_list_changed loads; after a call that uses it the plugin's
// tools are stale, and Relist lists them again: the tools gone cannot be
// called and their pre-started instances are stopped, a tool whose
// description changed is offered anew. A listing that fails keeps the tools
// as they were.
func TestExtismHyperMCPToolListChanged(t *testing.T) {
	out := filepath.Join(t.TempDir(), "changed.wasm")
	if err := wasmbuild.BuildWith([]string{"-buildmode=c-shared", "-tags", "v2 listchanged"}, out, filepath.Join("testdata", "extism_mcp")); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := newRuntime(t)
	s := extismSpec(t, "changed", wasm)
	s.Mounts = []Mount{{Name: "data", Host: t.TempDir(), Guest: "/data"}}
	p := load(t, r, s)
	if n := len(p.Tools()); n != 14 {
		t.Fatalf("%d tools at load, want 14", n)
	}
	// MCP requests and listings run on the base config of the load: they
	// open no mounts of their own.
	for range 2 {
		if _, err := p.MCPRequest(ctx, "list_prompts", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.mounts) != 1 {
		t.Fatalf("%d mounts after two MCP requests, want the 1 of the load", len(p.mounts))
	}
	if p.ToolsStale() {
		t.Fatal("stale before any call")
	}
	if changed, err := p.Relist(ctx); changed || err != nil {
		t.Fatalf("Relist before any notification: %v %v", changed, err)
	}
	call := func(name string) loop.ToolResult {
		t.Helper()
		res, err := p.Call(ctx, loop.ToolCall{ID: "c", Name: name, Arguments: `{"name":"x"}`})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	call("count") // its pre-started instance waits for the next call
	if len(p.table().byName["count"].warm) != 1 {
		t.Fatal("no pre-started instance of count")
	}
	if res := call("shrink"); res.IsError {
		t.Fatal(res.Content)
	}
	if !p.ToolsStale() || len(p.Tools()) != 14 {
		t.Fatalf("after shrink: stale %v, %d tools; want stale and the tools unchanged until Relist", p.ToolsStale(), len(p.Tools()))
	}
	old := p.table().byName["count"]
	if changed, err := p.Relist(ctx); !changed || err != nil {
		t.Fatalf("Relist after shrink: %v %v", changed, err)
	}
	if p.ToolsStale() || p.ToolsVersion() != 1 {
		t.Fatalf("after Relist: stale %v, version %d", p.ToolsStale(), p.ToolsVersion())
	}
	if got := p.Tools(); len(got) != 1 || got[0].Name != "greet" || got[0].Description != "Greet someone, shortly" {
		t.Fatalf("tools after Relist: %+v", got)
	}
	if len(old.warm) != 0 || !old.gone {
		t.Fatal("the pre-started instance of count, gone, was not stopped")
	}
	if res := call("count"); !res.IsError || !strings.Contains(res.Content, `plugin "changed" has no tool "count"; its tools are: greet`) {
		t.Fatalf("call of a tool gone: %+v", res)
	}
	if changed, err := p.Relist(ctx); changed || err != nil {
		t.Fatalf("second Relist: %v %v", changed, err)
	}
	if len(p.mounts) != 1 {
		t.Fatalf("%d mounts after a Relist, want the 1 of the load", len(p.mounts))
	}

	// break is gone from the list, but the plugin still answers it: a
	// plugin of the old list (a second load) makes the listing fail.
	p2 := load(t, r, extismSpec(t, "changed2", wasm))
	if res, err := p2.Call(ctx, loop.ToolCall{ID: "c", Name: "break", Arguments: `{}`}); err != nil || res.IsError {
		t.Fatalf("break: %+v %v", res, err)
	}
	changed, err := p2.Relist(ctx)
	if changed || err == nil || !strings.Contains(err.Error(), `plugin "changed2" said its tools changed, but listing them again failed, so they stay as they were: list_tools failed: the tools cannot be listed now`) {
		t.Fatalf("Relist of a failing list_tools: %v %v", changed, err)
	}
	if n := len(p2.Tools()); n != 14 {
		t.Fatalf("%d tools after a failed listing, want the 14 of the load", n)
	}
}
