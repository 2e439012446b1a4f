package component

import (
	"context"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/rootfs"
)

// loadJS builds (or takes from the cache) a JavaScript component and loads
// it with a compilation cache shared by the tests.
func loadJS(t testing.TB, name string, opts Options) *Component {
	t.Helper()
	b := jsComponent(t, name)
	ctx := context.Background()
	k, err := Load(ctx, newRuntime(t, filepath.Join(buildCache(t), "wazero")), b, opts)
	if err != nil {
		t.Fatalf("Load %s: %v", name, err)
	}
	t.Cleanup(func() { k.Close(ctx) })
	return k
}

// TestJSRich round-trips records, lists, options, results, enums,
// variants, flags, tuples, chars and floats through a component built by
// ComponentizeJS.
func TestJSRich(t *testing.T) {
	k := loadJS(t, "tools", Options{})
	names := []string{}
	for _, f := range k.Funcs() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "hello spin bomb flood read-file write-file write-at list-dir mounts fetch-url fetch-configured test_tools_shapes_0_1_0_echo test_tools_shapes_0_1_0_area test_tools_shapes_0_1_0_mix test_tools_shapes_0_1_0_points" {
		t.Errorf("tools = %s", got)
	}
	cases := []struct{ tool, args, want string }{
		{"hello", `{"name":"wörld"}`, `{"result":"hello wörld"}`},
		{"test_tools_shapes_0_1_0_echo", `{"p":{"x":1,"y":-2,"label":"L"}}`, `{"result":{"x":1,"y":-2,"label":"L"}}`},
		{"test_tools_shapes_0_1_0_echo", `{"p":{"x":2147483647,"y":-2147483648,"label":null}}`, `{"result":{"x":2147483647,"y":-2147483648,"label":null}}`},
		{"test_tools_shapes_0_1_0_area", `{"s":{"tag":"square","val":3}}`, `{"result":{"ok":9}}`},
		{"test_tools_shapes_0_1_0_area", `{"s":{"tag":"circle","val":1}}`, `{"result":{"ok":3.141592653589793}}`},
		{"test_tools_shapes_0_1_0_mix", `{"c":"green","f":["read","exec"],"t":["é",1.5],"l":[1,2,250],"o":18446744073709551614}`,
			`{"result":["green",["write"],"read+exec:é:1.5:3:253",18446744073709551615]}`},
		{"test_tools_shapes_0_1_0_mix", `{"c":"red","f":[],"t":["😀",-0.25],"l":[],"o":null}`,
			`{"result":["red",["read","write","exec"],":😀:-0.25:0:0",42]}`},
		{"test_tools_shapes_0_1_0_points", `{"n":3}`,
			`{"result":[{"x":0,"y":0,"label":null},{"x":1,"y":-1,"label":"p1"},{"x":2,"y":-2,"label":null}]}`},
	}
	for _, c := range cases {
		out := mustCall(t, k, c.tool, c.args, nil)
		if string(out.JSON) != c.want || out.IsError {
			t.Errorf("%s(%s)\n got %s (error %v)\nwant %s", c.tool, c.args, out.JSON, out.IsError, c.want)
		}
	}
	out := mustCall(t, k, "test_tools_shapes_0_1_0_area", `{"s":{"tag":"none"}}`, nil)
	if !out.IsError || string(out.JSON) != `{"result":{"err":"no shape"}}` {
		t.Errorf("area(none) = %s, error %v", out.JSON, out.IsError)
	}
	out = mustCall(t, k, "hello", `{"name":"you"}`, nil)
	if string(out.Stdout) != "greeting you\n" {
		t.Errorf("hello's stdout = %q", out.Stdout)
	}
	// Many values through memory.
	out = mustCall(t, k, "test_tools_shapes_0_1_0_points", `{"n":20000}`, nil)
	if !strings.HasSuffix(string(out.JSON), `{"x":19999,"y":-19999,"label":"p19999"}]}`) {
		t.Errorf("points(20000) ends %s", out.JSON[len(out.JSON)-60:])
	}
}

// TestJSHostile: a JavaScript guest that spins, allocates without end or
// floods stdout is stopped.
func TestJSHostile(t *testing.T) {
	k := loadJS(t, "tools", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := k.Call(ctx, "spin", nil, nil)
	failure(t, err, sandbox.FailureTimeout)

	_, err = callTool(t, k, "flood", `{}`, &Sandbox{MaxOutput: 100000})
	failure(t, err, sandbox.FailureOutput)

	small := loadJS(t, "tools", Options{MemoryLimitPages: 1024})
	_, err = callTool(t, small, "bomb", `{}`, nil)
	failure(t, err, sandbox.FailureMemory)
}

// filesSandbox mounts a fresh directory at /data with a file in it and a
// secret beside it, and returns the sandbox and the directory.
func filesSandbox(t *testing.T, readOnly bool) (*Sandbox, string) {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "data")
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "notes.txt"), "remember the milk\n")
	write(filepath.Join(dir, "sub", "deep.txt"), "deep\n")
	write(filepath.Join(top, "secret.txt"), "the host's secret\n")
	if err := os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "rel-out")); err != nil {
		t.Fatal(err)
	}
	fs, err := rootfs.New(dir, readOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	q := rootfs.NewQuota(1<<20, 100)
	return &Sandbox{Mounts: []Mount{{GuestPath: "/data", FS: fs.WithQuota(q), ReadOnly: readOnly}}, Quota: q}, dir
}

// TestJSFiles reads, writes and lists files under a mount through
// wasi:filesystem; ".." and symbolic links out of the mount are refused.
func TestJSFiles(t *testing.T) {
	k := loadJS(t, "tools", Options{})
	sb, dir := filesSandbox(t, false)
	want := func(tool, args, json string, isErr bool) {
		t.Helper()
		out := mustCall(t, k, tool, args, sb)
		if string(out.JSON) != json || out.IsError != isErr {
			t.Errorf("%s(%s)\n got %s (error %v)\nwant %s (error %v)", tool, args, out.JSON, out.IsError, json, isErr)
		}
	}
	want("mounts", `{}`, `{"result":["/data"]}`, false)
	want("read-file", `{"path":"notes.txt"}`, `{"result":{"ok":"remember the milk\n"}}`, false)
	want("read-file", `{"path":"sub/deep.txt"}`, `{"result":{"ok":"deep\n"}}`, false)
	want("list-dir", `{"path":"."}`, `{"result":{"ok":["link-out","notes.txt","rel-out","sub"]}}`, false)
	want("write-file", `{"path":"sub/new.txt","contents":"written by js"}`, `{"result":{"ok":13}}`, false)
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); err != nil || string(b) != "written by js" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	want("read-file", `{"path":"missing.txt"}`, `{"result":{"err":"no-entry"}}`, true)
	// Escapes.
	want("read-file", `{"path":"../secret.txt"}`, `{"result":{"err":"not-permitted"}}`, true)
	want("read-file", `{"path":"sub/../../secret.txt"}`, `{"result":{"err":"not-permitted"}}`, true)
	want("read-file", `{"path":"/etc/passwd"}`, `{"result":{"err":"not-permitted"}}`, true)
	want("read-file", `{"path":"link-out"}`, `{"result":{"err":"not-permitted"}}`, true)
	want("read-file", `{"path":"rel-out"}`, `{"result":{"err":"not-permitted"}}`, true)
	want("write-file", `{"path":"../planted.txt","contents":"x"}`, `{"result":{"err":"not-permitted"}}`, true)
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "planted.txt")); err == nil {
		t.Error("a file was written outside the mount")
	}

	// A read-only mount refuses writes.
	ro, _ := filesSandbox(t, true)
	out := mustCall(t, k, "write-file", `{"path":"x.txt","contents":"x"}`, ro)
	if !out.IsError || string(out.JSON) != `{"result":{"err":"read-only"}}` {
		t.Errorf("write on a read-only mount = %s", out.JSON)
	}
	if out := mustCall(t, k, "read-file", `{"path":"notes.txt"}`, ro); out.IsError {
		t.Errorf("read on a read-only mount = %s", out.JSON)
	}

	// Without a mount there is nothing.
	if out := mustCall(t, k, "mounts", `{}`, nil); string(out.JSON) != `{"result":[]}` {
		t.Errorf("mounts without a grant = %s", out.JSON)
	}

	// The quota ends the call.
	q, _ := filesSandbox(t, false)
	q.Quota = rootfs.NewQuota(100, 10)
	q.Mounts[0].FS = q.Mounts[0].FS.WithQuota(q.Quota)
	_, err := callTool(t, k, "write-file", `{"path":"big.txt","contents":"`+strings.Repeat("x", 1000)+`"}`, q)
	failure(t, err, sandbox.FailureQuota)
}

// TestJSFetch calls fetch in a component built by ComponentizeJS against a
// loopback server: an allowed origin answers, any other is refused, and a
// redirect to an origin not allowed is refused too.
func TestJSFetch(t *testing.T) {
	k := loadJS(t, "tools", Options{})
	var mu sync.Mutex
	var seen []string
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, name+" "+r.URL.Path)
			mu.Unlock()
			if r.URL.Path == "/redirect" {
				http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
				return
			}
			io.WriteString(w, "hello from "+name+" "+r.URL.Path)
		})
	}
	allowed := httptest.NewServer(handler("allowed"))
	defer allowed.Close()
	other := httptest.NewServer(handler("other"))
	defer other.Close()
	au, _ := url.Parse(allowed.URL)
	sb := &Sandbox{
		HTTP:   &HTTPGrant{Allow: func(u *url.URL) bool { return u.Scheme == au.Scheme && u.Host == au.Host }},
		Config: map[string]string{"base_url": allowed.URL},
	}
	out := mustCall(t, k, "fetch-url", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/x"), sb)
	if string(out.JSON) != `{"result":{"ok":"200 hello from allowed /x"}}` {
		t.Errorf("allowed: %s", out.JSON)
	}
	out = mustCall(t, k, "fetch-configured", `{"path":"/conf"}`, sb)
	if string(out.JSON) != `{"result":{"ok":"200 hello from allowed /conf"}}` {
		t.Errorf("configured: %s", out.JSON)
	}
	out = mustCall(t, k, "fetch-url", fmt.Sprintf(`{"url":%q}`, other.URL+"/y"), sb)
	if !out.IsError || !strings.Contains(string(out.JSON), "fetch failed") || len(out.HTTPRefused) != 1 || out.HTTPRefused[0].URL != other.URL+"/y" || out.HTTPRefused[0].Origin != other.URL {
		t.Errorf("other origin: %s, refused %v", out.JSON, out.HTTPRefused)
	}
	out = mustCall(t, k, "fetch-url", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/redirect?to="+url.QueryEscape(other.URL+"/z")), sb)
	// The host does not follow redirects: the guest sees the 302 (and a
	// guest that follows it makes a new request, checked again).
	if !strings.HasPrefix(string(out.JSON), `{"result":{"ok":"302 `) {
		t.Errorf("redirect: %s", out.JSON)
	}
	// No grant: nothing is reached.
	out = mustCall(t, k, "fetch-url", fmt.Sprintf(`{"url":%q}`, allowed.URL+"/nogrant"), nil)
	if !out.IsError {
		t.Errorf("without a grant: %s", out.JSON)
	}
	// A server that never answers: the call ends at its deadline.
	stuck := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stuck }))
	defer hang.Close()
	defer close(stuck)
	hu, _ := url.Parse(hang.URL)
	hsb := &Sandbox{HTTP: &HTTPGrant{Allow: func(u *url.URL) bool { return u.Host == hu.Host }}}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := k.Call(ctx, "fetch-url", []byte(fmt.Sprintf(`{"url":%q}`, hang.URL+"/slow")), hsb)
	failure(t, err, sandbox.FailureTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stuck request ended the call after %v", d)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.HasPrefix(s, "other") || strings.HasSuffix(s, "/nogrant") {
			t.Errorf("the request %q reached a server", s)
		}
	}
}
