package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/componenttest"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/loop"
)

// jsTools is the JavaScript component of host/component's tests (built
// with ComponentizeJS, cached): rich types, files, fetch, and hostile
// functions.
func jsTools(t testing.TB) []byte {
	t.Helper()
	return componenttest.JS(t, filepath.Join("..", "component", "testdata", "js", "tools"), "tools")
}

// watComponent reads a component of host/component's testdata, written
// by hand in the text format.
func watComponent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "component", "testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantFailure(t *testing.T, err error, kind sandbox.FailureKind, plugin string) *sandbox.Failure {
	t.Helper()
	var f *sandbox.Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *sandbox.Failure of kind %s", err, err, kind)
	}
	if f.Kind != kind || f.Plugin != plugin {
		t.Fatalf("failure = %s of plugin %q (%v), want %s of %q", f.Kind, f.Plugin, f.Err, kind, plugin)
	}
	return f
}

// TestComponentKindDetected: a component loads with kind "" or
// "component", its exported functions are its tools with schemas from
// their WIT types; a call's result is {"result": ...} and result::err an
// error result; arguments that do not fit the schema never run it.
func TestComponentKindDetected(t *testing.T) {
	r := newRuntime(t)
	wasm := jsTools(t)
	s := spec(t, "js", wasm)
	p := load(t, r, s)
	if p.Kind() != KindComponent {
		t.Fatalf("kind = %s", p.Kind())
	}
	var names []string
	for _, ts := range p.Tools() {
		names = append(names, ts.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "hello spin bomb flood read-file") || !strings.Contains(got, "test_tools_shapes_0_1_0_area") {
		t.Fatalf("tools = %s", got)
	}
	if res := mustCall(t, p, "hello", `{"name":"you"}`); res.IsError || res.Content != `{"result":"hello you"}` {
		t.Errorf("hello = %+v", res)
	}
	if res := mustCall(t, p, "test_tools_shapes_0_1_0_area", `{"s":{"tag":"none"}}`); !res.IsError || res.Content != `{"result":{"err":"no shape"}}` {
		t.Errorf("area(none) = %+v", res)
	}
	if res := mustCall(t, p, "hello", `{"name":7}`); !res.IsError || !strings.Contains(res.Content, "name") {
		t.Errorf("bad arguments = %+v", res)
	}
	s.Kind = KindComponent
	load(t, r, s)
	s.Kind = KindWASICLI
	if _, err := r.Load(context.Background(), s); err == nil || !strings.Contains(err.Error(), `is a WASI 0.2 component, not a core module of kind "wasi_cli"; set kind = "component"`) {
		t.Errorf("declared wasi_cli: %v", err)
	}
	core := spec(t, "core", guests["echo"])
	core.Kind = KindComponent
	if _, err := r.Load(context.Background(), core); err == nil || !strings.Contains(err.Error(), `plugin "core": `) || !strings.Contains(err.Error(), "not a WASI 0.2 component") {
		t.Errorf("kind component on a core module: %v", err)
	}
}

// TestComponentShapeRefused: async exports, exported resources and
// nested components with core modules are refused at load, naming the
// plugin and what is unsupported.
func TestComponentShapeRefused(t *testing.T) {
	r := newRuntime(t)
	for name, want := range map[string]string{
		"shape_async":    "async function",
		"shape_resource": "resource",
		"shape_nested":   "nested",
	} {
		_, err := r.Load(context.Background(), spec(t, name, watComponent(t, name)))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("plugin %q: component ", name)) || !strings.Contains(err.Error(), "unsupported component") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestComponentQuotaHole: a component that grows a file to 1 TiB by
// writing one byte at 1 TiB - 1 (descriptor.write, or a write-via-stream
// from there) or by set-size is charged for the growth, as a WASI preview 1
// plugin is (one rule, in rootfs): under max_write = 1MiB the call fails
// with a quota failure and the file stays empty. Growth within the quota
// is written.
func TestComponentQuotaHole(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t)
	s := spec(t, "files", jsTools(t))
	s.Mounts = []Mount{{Name: "data", Host: dir, Guest: "/data", Mode: MountRW}}
	s.Limits.MaxWrite = 1 << 20
	p := load(t, r, s)
	for _, how := range []string{"write", "stream", "set-size"} {
		path := "hole-" + how
		_, err := call(t, p, "write-at", fmt.Sprintf(`{"path":%q,"offset":%d,"how":%q}`, path, int64(1<<40-1), how))
		if f := wantFailure(t, err, sandbox.FailureQuota, "files"); !strings.Contains(f.Err.Error(), "max_write (1MiB)") {
			t.Errorf("%s at 1 TiB - 1: %v, want it to name max_write", how, f.Err)
		}
		if fi, err := os.Stat(filepath.Join(dir, path)); err != nil || fi.Size() != 0 {
			t.Errorf("%s at 1 TiB - 1: the file has %d bytes, %v; want 0", how, fi.Size(), err)
		}
		res := mustCall(t, p, "write-at", fmt.Sprintf(`{"path":"small-%s","offset":%d,"how":%q}`, how, 512<<10, how))
		if res.IsError || res.Content != `{"result":{"ok":524289}}` {
			t.Errorf("%s at 512 KiB: %+v, want a file of 524289 bytes", how, res)
		}
	}
}

// TestComponentFiles: wasi:filesystem sees the block's mounts through
// rootfs: a read-write mount takes writes within max_write, ".." and
// symbolic links out of the mount are refused, a read-only mount refuses
// writes.
func TestComponentFiles(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "data")
	ro := filepath.Join(top, "ro")
	for _, d := range []string{dir, ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(top, "secret.txt"), []byte("the host's secret\n"), 0o644))
	must(t, os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(dir, "link-out")))
	r := newRuntime(t)
	s := spec(t, "files", jsTools(t))
	s.Mounts = []Mount{{Name: "data", Host: dir, Guest: "/data", Mode: MountRW}}
	s.Limits.MaxWrite = 1000
	p := load(t, r, s)
	if res := mustCall(t, p, "read-file", `{"path":"notes.txt"}`); res.IsError || res.Content != `{"result":{"ok":"remember the milk\n"}}` {
		t.Errorf("read = %+v", res)
	}
	if res := mustCall(t, p, "write-file", `{"path":"new.txt","contents":"hi"}`); res.IsError {
		t.Errorf("write = %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "hi" {
		t.Errorf("written file = %q, %v", b, err)
	}
	for _, path := range []string{"../secret.txt", "link-out", "/etc/passwd"} {
		res := mustCall(t, p, "read-file", fmt.Sprintf(`{"path":%q}`, path))
		if !res.IsError || strings.Contains(res.Content, "secret") && strings.Contains(res.Content, "the host's") {
			t.Errorf("read %s = %+v", path, res)
		}
	}
	_, err := call(t, p, "write-file", fmt.Sprintf(`{"path":"big.txt","contents":%q}`, strings.Repeat("x", 5000)))
	wantFailure(t, err, sandbox.FailureQuota, "files")

	s = spec(t, "ro", jsTools(t))
	s.Mounts = []Mount{{Name: "ro", Host: ro, Guest: "/ro", Mode: MountRO}}
	p = load(t, r, s)
	if res := mustCall(t, p, "write-file", `{"path":"x.txt","contents":"hi"}`); !res.IsError {
		t.Errorf("write to a read-only mount = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(ro, "x.txt")); err == nil {
		t.Error("the read-only mount was written")
	}
}

// TestComponentProtectedFiles: a host file protected by the runtime
// cannot be read through a mount that contains it.
func TestComponentProtectedFiles(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agents.hcl"), []byte("secret config"), 0o644))
	r := newRuntime(t)
	r.SetProtected([]rootfs.Protected{{Path: filepath.Join(dir, "agents.hcl")}})
	s := spec(t, "prot", jsTools(t))
	s.Mounts = []Mount{{Name: "d", Host: dir, Guest: "/d"}}
	p := load(t, r, s)
	if res := mustCall(t, p, "read-file", `{"path":"agents.hcl"}`); !res.IsError || strings.Contains(res.Content, "secret config") {
		t.Errorf("protected file = %+v", res)
	}
}

// TestComponentHTTP: wasi:http reaches only the origins of the block's
// http allow list; config reaches wasi:config/store; without an allow
// list nothing is reached.
func TestComponentHTTP(t *testing.T) {
	var seen []string
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, name+" "+r.URL.Path)
			io.WriteString(w, "hello from "+name)
		})
	}
	allowed := httptest.NewServer(handler("allowed"))
	defer allowed.Close()
	other := httptest.NewServer(handler("other"))
	defer other.Close()
	r := newRuntime(t)
	s := spec(t, "web", jsTools(t))
	s.HTTPAllow = []string{allowed.URL}
	s.Config = map[string]string{"base_url": allowed.URL}
	p := load(t, r, s)
	if res := mustCall(t, p, "fetch-url", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/a")); res.IsError || res.Content != `{"result":{"ok":"200 hello from allowed"}}` {
		t.Errorf("allowed = %+v", res)
	}
	if res := mustCall(t, p, "fetch-configured", `{"path":"/c"}`); res.IsError || !strings.Contains(res.Content, "hello from allowed") {
		t.Errorf("configured = %+v", res)
	}
	if res := mustCall(t, p, "fetch-url", fmt.Sprintf(`{"url":%q}`, other.URL+"/b")); !res.IsError || !strings.Contains(res.Content, "fetch failed") {
		t.Errorf("other origin = %+v", res)
	}
	s = spec(t, "offline", jsTools(t))
	p = load(t, r, s)
	if res := mustCall(t, p, "fetch-url", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/n")); !res.IsError {
		t.Errorf("no allow list = %+v", res)
	}
	if got := strings.Join(seen, ","); got != "allowed /a,allowed /c" {
		t.Errorf("requests the servers saw: %s", got)
	}
	s = spec(t, "badallow", jsTools(t))
	s.HTTPAllow = []string{"example.com"}
	if _, err := r.Load(context.Background(), s); err == nil || !strings.Contains(err.Error(), "must be an origin") {
		t.Errorf("bad allow entry: %v", err)
	}
}

// TestComponentHostile: spin, memory bomb and output flood end as
// Failures of the plugin within its limits; an import agenthost does not
// provide (wasi:sockets) traps, naming it; the host goes on.
func TestComponentHostile(t *testing.T) {
	r := newRuntime(t)
	s := spec(t, "hostile", jsTools(t))
	s.Limits = Limits{Memory: 64 << 20, Timeout: time.Second, MaxOutput: 64 << 10}
	p := load(t, r, s)
	start := time.Now()
	_, err := call(t, p, "spin", `{}`)
	f := wantFailure(t, err, sandbox.FailureTimeout, "hostile")
	if !strings.Contains(f.Err.Error(), "limits.timeout") || time.Since(start) > 10*time.Second {
		t.Errorf("spin: %v after %s", f.Err, time.Since(start))
	}
	s.Limits.Timeout = 30 * time.Second
	p = load(t, r, s)
	_, err = call(t, p, "bomb", `{}`)
	wantFailure(t, err, sandbox.FailureMemory, "hostile")
	_, err = call(t, p, "flood", `{}`)
	wantFailure(t, err, sandbox.FailureOutput, "hostile")
	if res := mustCall(t, p, "hello", `{"name":"after"}`); res.Content != `{"result":"hello after"}` {
		t.Errorf("after the hostile calls: %+v", res)
	}

	w := load(t, r, spec(t, "wat", watComponent(t, "wasi")))
	_, err = call(t, w, "missing-import", `{}`)
	f = wantFailure(t, err, sandbox.FailureTrap, "wat")
	if !strings.Contains(f.Err.Error(), "wasi:sockets") || !strings.Contains(f.Err.Error(), "does not provide") {
		t.Errorf("missing import: %v", f.Err)
	}
}

// TestComponentGrants: env, clock and random reach the component only as
// granted; the clock is fake without the grant.
func TestComponentGrants(t *testing.T) {
	r := newRuntime(t)
	wasm := watComponent(t, "wasi")
	s := spec(t, "g", wasm)
	s.Env = map[string]string{"GREETING": "hi"}
	p := load(t, r, s)
	if res := mustCall(t, p, "environment", `{}`); res.Content != `{"result":[["GREETING","hi"]]}` {
		t.Errorf("environment = %s", res.Content)
	}
	if res := mustCall(t, p, "wall-now", `{}`); !strings.HasPrefix(res.Content, `{"result":{"seconds":1640995200,`) {
		t.Errorf("fake wall clock = %s", res.Content)
	}
	s.Clock = true
	p = load(t, r, s)
	res := mustCall(t, p, "wall-now", `{}`)
	var now struct{ Result struct{ Seconds int64 } }
	if err := json.Unmarshal([]byte(res.Content), &now); err != nil || now.Result.Seconds < time.Now().Unix()-600 || now.Result.Seconds > time.Now().Unix()+600 {
		t.Errorf("granted wall clock = %s (%v)", res.Content, err)
	}
	a := mustCall(t, load(t, r, spec(t, "r1", wasm)), "random-u64", `{}`)
	b := mustCall(t, load(t, r, spec(t, "r2", wasm)), "random-u64", `{}`)
	if a.Content != b.Content {
		t.Errorf("ungranted random differs: %s %s", a.Content, b.Content)
	}
	s = spec(t, "r3", wasm)
	s.Random = true
	c := mustCall(t, load(t, r, s), "random-u64", `{}`)
	if c.Content == a.Content {
		t.Errorf("granted random = the fake stream: %s", c.Content)
	}
}

// TestComponentCanceled: a cancelled context ends the call as canceled.
func TestComponentCanceled(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, spec(t, "c", jsTools(t)))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := p.Call(ctx, loop.ToolCall{ID: "1", Name: "spin", Arguments: `{}`})
	wantFailure(t, err, sandbox.FailureCanceled, "c")
}

// TestInspectComponent: inspect shows the world: exports with WIT
// signatures, imports with whether they are provided.
func TestInspectComponent(t *testing.T) {
	r := newRuntime(t)
	info, err := Inspect(context.Background(), r, watComponent(t, "wasi"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != KindComponent || info.World == nil {
		t.Fatalf("%+v", info)
	}
	text := info.String()
	for _, want := range []string{
		"kind:     component\n",
		"  export config-get: func(key: string) -> result<option<string>, variant { upstream(string), io(string) }>\n",
		"  import wasi:cli/environment@0.2.3: provided\n",
		"  import wasi:sockets/tcp@0.2.3: NOT PROVIDED (its functions trap when called)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect lacks %q:\n%s", want, text)
		}
	}
	info, err = Inspect(context.Background(), r, watComponent(t, "shape_async"))
	if err != nil || info.Kind != "" || len(info.Problems) != 1 || !strings.Contains(info.Problems[0], "async") {
		t.Errorf("async component: %+v, %v", info, err)
	}
}

// TestComponentCachedLoad: a component loaded before from the same cache
// is loaded from its facts: its core modules are not compiled at load but
// in the background or by its first call, which then runs as usual. A
// component seen for the first time is compiled at load.
func TestComponentCachedLoad(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	wasm := watComponent(t, "wasi")
	loadIn := func() *Plugin {
		t.Helper()
		r, err := NewRuntime(ctx, cache)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(ctx) })
		return load(t, r, spec(t, "w", wasm))
	}
	compiled := func(p *Plugin) bool {
		select {
		case <-p.mod.done:
			return true
		default:
			return false
		}
	}
	first := loadIn()
	if !compiled(first) {
		t.Fatal("first load: not compiled at load")
	}
	second := loadIn()
	if compiled(second) {
		t.Fatal("second load: compiled at load, want it compiled later (load facts)")
	}
	if res := mustCall(t, second, "environment", `{}`); res.IsError || res.Content != `{"result":[]}` {
		t.Fatalf("call after a cached load: %+v", res)
	}
	if !compiled(second) {
		t.Fatal("the first call did not compile the component")
	}
}
