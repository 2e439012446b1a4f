package plugin

import (
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/internal/wasmbin"
	"github.com/agenthost/agenthost/loop"
)

// appendCustomSection returns b with a custom section appended.
func appendCustomSection(b []byte, name string, payload []byte) []byte {
	body := append(wasmbin.AppendName(nil, name), payload...)
	return wasmbin.AppendSection(append([]byte{}, b...), 0, body)
}

// Hand-assembled modules.
var (
	header = []byte("\x00asm\x01\x00\x00\x00")
	// typeSec declares one type: func() -> ().
	typeSec = []byte{0x01, 0x04, 0x01, 0x60, 0x00, 0x00}
	// trapModule exports _start, whose body is `unreachable`, and a memory.
	trapModule = concat(header, typeSec,
		[]byte{0x03, 0x02, 0x01, 0x00},       // function section: one func of type 0
		[]byte{0x05, 0x03, 0x01, 0x00, 0x01}, // memory section: min 1 page
		[]byte{0x07, 0x13, 0x02, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00},
		[]byte{0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b}, // code: unreachable
	)
)

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// importModule imports one func() from mod.name and exports nothing.
func importModule(mod, name string) []byte {
	entry := wasmbin.AppendUleb32(nil, 1)
	entry = wasmbin.AppendName(entry, mod)
	entry = wasmbin.AppendName(entry, name)
	entry = append(entry, 0x00, 0x00) // func, type 0
	return concat(header, typeSec, wasmbin.AppendSection(nil, 0x02, entry))
}

// TestHostile runs every hostile tool twice (a cold instance, then a
// pre-started one): each call must end in an error within its limits, the
// secret planted outside the mount must never appear, and a good call must
// succeed afterwards.
func TestHostile(t *testing.T) {
	s := newSandbox(t)
	r := newRuntime(t)
	mk := func(name string, mode MountMode, timeout time.Duration) *Plugin {
		cp := spec(t, name, guests["hostile"])
		cp.Limits.Timeout = timeout
		if mode != "" {
			cp.Mounts = []Mount{{Name: "ws", Host: s.ws, Guest: "/workspace", Mode: mode}}
		}
		return load(t, r, cp)
	}
	rw := mk("hostile-rw", "rw", 5*time.Second)
	ro := mk("hostile-ro", "ro", 5*time.Second)
	bare := mk("hostile-bare", "", 5*time.Second)
	fast := mk("hostile-fast", "rw", time.Second)
	good := load(t, r, spec(t, "echo", guests["echo"]))
	trapCfg := spec(t, "trap", appendCustomSection(trapModule, ManifestSection,
		[]byte(`{"protocol":"agenthost/1","tools":[{"name":"trap","description":"trap"}]}`)))
	trap := load(t, r, trapCfg)

	type want struct {
		kind   sandbox.FailureKind // "" means an error result
		detail string              // in the error or the result
	}
	tests := []struct {
		name string
		p    *Plugin
		tool string
		args string
		want want
		max  time.Duration
	}{
		{"endless loop", fast, "loop", "", want{sandbox.FailureTimeout, "no result within 1s"}, 5 * time.Second},
		{"memory bomb", rw, "membomb", "", want{sandbox.FailureMemory, "memory at its limit of 64MiB"}, 5 * time.Second},
		{"stdout flood", rw, "flood", "", want{sandbox.FailureOutput, "output flood"}, 5 * time.Second},
		{"stderr flood", rw, "flood_stderr", "", want{sandbox.FailureOutput, "output flood"}, 5 * time.Second},
		{"dotdot escape", rw, "dotdot", "", want{"", ""}, 5 * time.Second},
		{"host symlinks", rw, "hostlink", "", want{"", ""}, 5 * time.Second},
		{"guest symlinks", rw, "guestlink", "", want{"", ""}, 5 * time.Second},
		{"absolute path with mount", rw, "abspath", `{"path":"` + s.secretPath + `"}`, want{"", ""}, 5 * time.Second},
		{"absolute path without mount", bare, "abspath", `{"path":"` + s.secretPath + `"}`, want{"", ""}, 5 * time.Second},
		{"write on read-only mount", ro, "writero", "", want{"", "every write refused"}, 5 * time.Second},
		{"panic", rw, "panic", "", want{sandbox.FailureExit, "exit code 2"}, 5 * time.Second},
		{"odd exit code", rw, "exit7", "", want{sandbox.FailureExit, "exit code 7"}, 5 * time.Second},
		{"trap", trap, "trap", "", want{sandbox.FailureTrap, "unreachable"}, 5 * time.Second},
	}
	for _, tc := range tests {
		for _, round := range []string{"cold", "warm"} {
			t.Run(tc.name+"/"+round, func(t *testing.T) {
				start := time.Now()
				res, err := tc.p.Call(context.Background(), loop.ToolCall{ID: "h", Name: tc.tool, Arguments: tc.args})
				elapsed := time.Since(start)
				if elapsed > tc.max {
					t.Errorf("took %v, want under %v", elapsed, tc.max)
				}
				text := res.Content
				if err != nil {
					text = err.Error()
				}
				if strings.Contains(text, s.secret) {
					t.Fatalf("secret leaked: %q", text)
				}
				if tc.want.kind == "" {
					if err != nil || !res.IsError {
						t.Fatalf("got %+v, %v; want an error result", res, err)
					}
				} else {
					var f *sandbox.Failure
					if !errors.As(err, &f) || f.Kind != tc.want.kind {
						t.Fatalf("got %+v, %v; want a *sandbox.Failure of kind %s", res, err, tc.want.kind)
					}
					if f.Plugin != tc.p.Name() || f.Tool != tc.tool {
						t.Errorf("failure names %q/%q", f.Plugin, f.Tool)
					}
					if tc.want.kind == sandbox.FailureTimeout && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("timeout failure does not wrap context.DeadlineExceeded: %v", err)
					}
				}
				if !strings.Contains(text, tc.want.detail) {
					t.Errorf("%q lacks %q", text, tc.want.detail)
				}
				if res := mustCall(t, good, "echo", `{"text":"still here"}`); res.IsError || res.Content != "still here (call c1)" {
					t.Errorf("good call after hostile one: %+v", res)
				}
			})
		}
	}
	// The read-only mount is untouched and nothing was created outside ws.
	if b, err := os.ReadFile(filepath.Join(s.ws, "inside.txt")); err != nil || string(b) != "inside content" {
		t.Errorf("inside.txt after attacks: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(s.root)
	for _, e := range entries {
		if e.Name() != "ws" && e.Name() != "secret.txt" {
			t.Errorf("attack created %s outside the mount", e.Name())
		}
	}
	for _, name := range []string{"evil0", "evil1", "evil2"} {
		if _, err := os.Lstat(filepath.Join(s.ws, name)); err == nil {
			target, _ := os.Readlink(filepath.Join(s.ws, name))
			t.Errorf("guest created escaping symlink %s -> %s", name, target)
		}
	}
}

func TestOutputTruncated(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, spec(t, "hostile", guests["hostile"]))
	max := int(p.Limits().MaxOutput)
	res := mustCall(t, p, "bigout", `{"n":`+itoa(max+max/2)+`}`)
	if res.IsError || !strings.HasPrefix(res.Content, strings.Repeat("x", max)+"\n[output truncated: "+itoa(max)+" of "+itoa(max+max/2)+" bytes shown]") {
		t.Errorf("got %d bytes ending %q", len(res.Content), res.Content[max-5:])
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + formatInt(n)) }

func formatInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestDetectAndRefuse(t *testing.T) {
	r := newRuntime(t)
	tests := []struct {
		name string
		wasm []byte
		kind Kind
		want string
	}{
		{"malformed component", []byte("\x00asm\x0d\x00\x01\x00rest"), "", "plugin.wasm: offset 10: "},
		{"not wasm", []byte("#!/bin/sh\n"), "", "not a WebAssembly module"},
		{"unknown import", importModule("env", "foo"), "", "imports env.foo which agenthost does not provide"},
		{"extism import with a wrong signature", importModule("extism:host/env", "input_length"), "", "imports extism:host/env.input_length with a signature that differs from Extism's"},
		{"unknown extism import", importModule("extism:host/env", "nope"), "", "imports extism:host/env.nope which agenthost does not provide"},
		{"declared extism without tools", guests["echo"], KindExtism, "declare them with tool blocks"},
		{"no _start", concat(header, typeSec), "", "exports no _start"},
		{"plain command without tool blocks", guests["cli"], "", `cannot detect the plugin kind`},
		{"wasi_cli without tool blocks", guests["cli"], KindWASICLI, "needs at least one tool block"},
		{"bad custom manifest", appendCustomSection(trapModule, ManifestSection, []byte(`{"protocol":"agenthost/2"}`)), "", `protocol is "agenthost/2"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := spec(t, "p", tc.wasm)
			cp.Kind = tc.kind
			_, err := r.Load(context.Background(), cp)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `plugin "p"`) {
				t.Fatalf("err = %v, want one naming the plugin and containing %q", err, tc.want)
			}
		})
	}
}

func TestInspect(t *testing.T) {
	r := newRuntime(t)
	ctx := context.Background()
	info, err := Inspect(ctx, r, guests["echo"])
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != KindAgenthost || info.ManifestSource != "describe" || len(info.Tools) != 10 || info.Manifest.Name != "echo" {
		t.Errorf("echo: %+v", info)
	}
	out := info.String()
	for _, w := range []string{"kind:     agenthost", "manifest: agenthost/1 (from describe), echo 0.1.0", "  echo: Echo text as a CallToolResult.", "  fs /workspace (rw): files", "  clock"} {
		if !strings.Contains(out, w) {
			t.Errorf("String() lacks %q:\n%s", w, out)
		}
	}
	if !containsStr(info.Exports, "_start") || !containsStr(info.Imports, "wasi_snapshot_preview1.fd_write") {
		t.Errorf("echo imports/exports: %v %v", info.Imports, info.Exports)
	}
	info, err = Inspect(ctx, r, guests["cli"])
	if err != nil || info.Kind != KindWASICLI || len(info.Problems) != 1 {
		t.Errorf("cli: %+v, %v", info, err)
	}
	info, err = Inspect(ctx, r, importModule("env", "foo"))
	if err != nil || info.Kind != "" || len(info.Problems) != 1 || !strings.Contains(info.Problems[0], "env.foo") {
		t.Errorf("env.foo: %+v, %v", info, err)
	}
	if _, err := Inspect(ctx, r, []byte("\x00asm\x0d\x00\x01\x00\x01")); err == nil || !strings.Contains(err.Error(), "WASI 0.2 component: ") {
		t.Errorf("malformed component: err = %v", err)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestHostileProtected: a plugin with a read-write mount of a project
// directory cannot read, change, move, replace or alias agenthost's own
// files in it (the config, the data directory with the cache and the
// sessions, prompts, its own .wasm), and does not see them in listings;
// the rest of the mount is its own.
func TestHostileProtected(t *testing.T) {
	ws := t.TempDir()
	files := map[string]string{
		"agents.hcl":                          "plugin {}",
		".agenthost/cache/wazero-x/code":      "native code",
		".agenthost/sessions/s1/events.jsonl": "{}\n",
		"prompts/system.md":                   "You are.",
		"hostile.wasm":                        string(guests["hostile"]),
		"notes.txt":                           "the user's",
	}
	for name, data := range files {
		p := filepath.Join(ws, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	r := newRuntime(t)
	r.SetProtected([]rootfs.Protected{
		{Path: filepath.Join(ws, ".agenthost"), What: "the data directory"},
		{Path: filepath.Join(ws, "agents.hcl"), What: "the config file"},
		{Path: filepath.Join(ws, "prompts"), What: "the prompts directory"},
		{Path: filepath.Join(ws, "hostile.wasm"), What: "the plugin file"},
	})
	cp := spec(t, "hostile", guests["hostile"])
	cp.Path = filepath.Join(ws, "hostile.wasm")
	cp.Mounts = []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}
	p := load(t, r, cp)
	args := `{"paths": ["agents.hcl", ".agenthost/cache/wazero-x/code", ".agenthost/sessions/s1/events.jsonl", ".agenthost", "prompts/system.md", "prompts", "hostile.wasm"]}`
	for _, round := range []string{"cold", "warm"} {
		res := mustCall(t, p, "tamper", args)
		if !res.IsError || !strings.HasPrefix(res.Content, "all refused:") {
			t.Fatalf("%s: tamper = %+v", round, res)
		}
		if n := strings.Count(res.Content, "Permission denied"); n < 40 {
			t.Errorf("%s: %d refusals say Permission denied:\n%s", round, n, res.Content)
		}
		res = mustCall(t, p, "listdir", `{"path": "."}`)
		if res.IsError || res.Content != "notes.txt" {
			t.Errorf("%s: listing of the mount = %+v, want only notes.txt", round, res)
		}
	}
	for name, data := range files {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != data {
			t.Errorf("%s changed: %.40q, %v", name, b, err)
		}
	}
	// the plugin still works on its own files
	if res := mustCall(t, p, "tamper", `{"paths": ["notes.txt"]}`); res.IsError || !strings.HasPrefix(res.Content, "TAMPERED") {
		t.Errorf("tamper with the user's own file: %+v", res)
	}
}

// TestHostileQuotaHole: a call that grows a file by writing one byte far
// past its end, at 1 TiB - 1 (with pwrite, or a seek and a write), is
// charged for the hole as a truncate that grows the file is: under
// max_write = 1MiB it fails with a quota failure, though the guest ignores
// the errors, and the file stays empty. A hole within the quota is
// written.
func TestHostileQuotaHole(t *testing.T) {
	ws := t.TempDir()
	r := newRuntime(t)
	cp := spec(t, "hostile", guests["hostile"])
	cp.Limits.MaxWrite = 1 << 20
	cp.Mounts = []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}
	p := load(t, r, cp)
	for _, how := range []string{"pwrite", "seek"} {
		path := "hole-" + how
		_, err := p.Call(context.Background(), loop.ToolCall{ID: "q", Name: "holewrite", Arguments: fmt.Sprintf(`{"n": %d, "path": %q, "how": %q}`, int64(1<<40-1), path, how)})
		var f *sandbox.Failure
		if !errors.As(err, &f) || f.Kind != sandbox.FailureQuota || !strings.Contains(err.Error(), "wrote more than max_write (1MiB)") {
			t.Errorf("%s at 1 TiB - 1: %v, want a quota failure naming max_write", how, err)
		}
		if fi, err := os.Stat(filepath.Join(ws, path)); err != nil || fi.Size() != 0 {
			t.Errorf("%s at 1 TiB - 1: the file has %d bytes, %v; want 0", how, fi.Size(), err)
		}
		small := "small-" + how
		res := mustCall(t, p, "holewrite", fmt.Sprintf(`{"n": %d, "path": %q, "how": %q}`, 512<<10, small, how))
		if res.IsError || res.Content != "524289" {
			t.Errorf("%s at 512 KiB: %+v, want a file of 524289 bytes", how, res)
		}
	}
}

// TestHostileQuota: a call that writes more than max_write, or creates more
// than max_files entries, in its read-write mounts fails with a quota
// failure even though the guest ignores the errors; what it wrote stops at
// the quota; each call has its own quota, also when calls run at once.
func TestHostileQuota(t *testing.T) {
	ws := t.TempDir()
	r := newRuntime(t)
	cp := spec(t, "hostile", guests["hostile"])
	cp.Limits.MaxWrite = 1 << 20
	cp.Limits.MaxFiles = 20
	cp.Mounts = []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}
	p := load(t, r, cp)
	for _, round := range []string{"cold", "warm"} {
		_, err := p.Call(context.Background(), loop.ToolCall{ID: "q", Name: "bigwrite", Arguments: `{"n": 3145728, "path": "big"}`})
		var f *sandbox.Failure
		if !errors.As(err, &f) || f.Kind != sandbox.FailureQuota || !strings.Contains(err.Error(), "wrote more than max_write (1MiB)") {
			t.Fatalf("%s: bigwrite: %v, want a quota failure naming max_write", round, err)
		}
		if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() != 1<<20 {
			t.Errorf("%s: big has %d bytes, %v; want 1MiB", round, fi.Size(), err)
		}
		dir := "many-" + round
		must(t, os.Mkdir(filepath.Join(ws, dir), 0o755))
		_, err = p.Call(context.Background(), loop.ToolCall{ID: "q", Name: "manyfiles", Arguments: `{"n": 200, "path": "` + dir + `"}`})
		if !errors.As(err, &f) || f.Kind != sandbox.FailureQuota || !strings.Contains(err.Error(), "created more than max_files (20) files, directories and links") {
			t.Fatalf("%s: manyfiles: %v, want a quota failure naming max_files", round, err)
		}
		if ents, _ := os.ReadDir(filepath.Join(ws, dir)); len(ents) != 20 {
			t.Errorf("%s: %d entries created, want 20", round, len(ents))
		}
	}
	// Within the quota, calls succeed, each with its own count.
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Call(context.Background(), loop.ToolCall{ID: "q", Name: "bigwrite", Arguments: fmt.Sprintf(`{"n": 786432, "path": "ok%d"}`, i)})
			if err != nil || res.IsError {
				t.Errorf("bigwrite of 768KiB: %+v, %v", res, err)
			}
		}()
	}
	wg.Wait()
	// A plugin with only read-only mounts has no quota to report.
	ro := spec(t, "hostile-ro", guests["hostile"])
	ro.Mounts = []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRO}}
	if res := mustCall(t, load(t, r, ro), "bigwrite", `{"n": 10, "path": "x"}`); res.IsError {
		t.Errorf("bigwrite on a read-only mount (errors ignored): %+v", res)
	}
}
