package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/loop"
)

// BenchmarkCompileCold compiles the echo guest (a Go-built module) with an
// empty cache each time.
func BenchmarkCompileCold(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		r, err := NewRuntime(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := r.compile(ctx, guests["echo"], 64<<20); err != nil {
			b.Fatal(err)
		}
		r.Close(ctx)
	}
}

// BenchmarkCompileWarmCache compiles the echo guest in a new runtime whose
// on-disk cache already holds it, as a second agenthost run does.
func BenchmarkCompileWarmCache(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	compile := func() {
		r, err := NewRuntime(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := r.compile(ctx, guests["echo"], 64<<20); err != nil {
			b.Fatal(err)
		}
		r.Close(ctx)
	}
	compile()
	for b.Loop() {
		compile()
	}
}

// BenchmarkCallAgenthost measures one echo call end to end (argument
// validation, instance, protocol, result), with a fresh instance started
// on the call path (cold) or pre-started in the background (warm). warm_raw
// calls a tool that copies its request to stdout without decoding it: the
// host's share of a warm call; the rest of warm is the guest's own work
// (encoding/json starting from cold caches in every fresh instance).
func BenchmarkCallAgenthost(b *testing.B) {
	for _, mode := range []struct {
		name     string
		tool     string
		prestart bool
	}{{"cold", "echo", false}, {"warm", "echo", true}, {"warm_raw", "raw", true}} {
		b.Run(mode.name, func(b *testing.B) {
			r := newRuntime(b)
			p := load(b, r, spec(b, "echo", guests["echo"]))
			p.SetPrestart(mode.prestart)
			c := loop.ToolCall{ID: "b", Name: mode.tool, Arguments: `{"text":"bench"}`}
			ctx := context.Background()
			if _, err := p.Call(ctx, c); err != nil { // the first call is cold either way
				b.Fatal(err)
			}
			for b.Loop() {
				if mode.prestart {
					// A model takes far longer to answer than a guest takes
					// to start; let the pre-started instance get ready.
					b.StopTimer()
					waitReady(b, p, mode.tool)
					b.StartTimer()
				}
				res, err := p.Call(ctx, c)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkCallWASICLI measures one wasi_cli call (argv evaluation and a
// fresh instance; never pre-started).
func BenchmarkCallWASICLI(b *testing.B) {
	r := newRuntime(b)
	cp := spec(b, "cli", guests["cli"])
	cp.Tools = []CLITool{{
		Name: "shout", InputSchema: json.RawMessage(`{"type":"object"}`),
		Command: func(raw json.RawMessage) ([]string, []byte, error) {
			args, err := stringArgs(raw)
			return []string{"cli", args["text"]}, []byte(args["text"]), err
		},
	}}
	p := load(b, r, cp)
	c := loop.ToolCall{ID: "b", Name: "shout", Arguments: `{"text":"bench"}`}
	ctx := context.Background()
	for b.Loop() {
		res, err := p.Call(ctx, c)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// waitReady waits until the tool's pre-started instance reads stdin.
func waitReady(tb testing.TB, p *Plugin, tool string) {
	t := p.table().byName[tool]
	if p.ah != nil && p.ah.shared != nil {
		t = p.ah.shared // a reuse plugin pre-starts one instance for all its tools
	}
	i := <-t.warm
	select {
	case <-i.ready:
	case <-i.done:
		tb.Fatal("pre-started instance ended before its call")
	}
	t.warm <- i
}

// BenchmarkCallCore measures a read_file call to the embedded core plugin,
// on a fresh instance (cold) and on a pre-started one (warm). The guarded
// variants mount a directory that also holds agenthost's own files (a
// config file and a data directory), so every path is resolved component
// by component.
func BenchmarkCallCore(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "agents.hcl"), []byte("agent \"a\" {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".agenthost", "sessions"), 0o755); err != nil {
		b.Fatal(err)
	}
	protected := []rootfs.Protected{
		{Path: filepath.Join(ws, "agents.hcl"), What: "the config file"},
		{Path: filepath.Join(ws, ".agenthost"), What: "the data directory"},
	}
	for _, mode := range []struct {
		name     string
		prestart bool
		guarded  bool
	}{{"cold", false, false}, {"warm", true, false}, {"cold_guarded", false, true}, {"warm_guarded", true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			r := newRuntime(b)
			if mode.guarded {
				r.SetProtected(protected)
			}
			p := load(b, r, Spec{Name: "core", Builtin: "core",
				Limits: Limits{Memory: defaults.Memory, Timeout: 10 * time.Second, MaxOutput: 1 << 20},
				Mounts: []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}})
			if got := p.mounts[0].fs.Guarded(); got != mode.guarded {
				b.Fatalf("mount guarded = %v", got)
			}
			p.SetPrestart(mode.prestart)
			c := loop.ToolCall{ID: "b", Name: "read_file", Arguments: `{"path":"a.txt"}`}
			ctx := context.Background()
			if _, err := p.Call(ctx, c); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if mode.prestart {
					b.StopTimer()
					waitReady(b, p, "read_file")
					b.StartTimer()
				}
				res, err := p.Call(ctx, c)
				if err != nil || res.IsError || !strings.Contains(res.Content, "three") {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkResolve measures the file-system side alone: opening and
// reading a file two directories deep, in a mount without and with
// protected entries.
func BenchmarkResolve(b *testing.B) {
	ws := b.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src", "pkg"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "pkg", "a.go"), []byte("package pkg\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "agents.hcl"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, guarded := range []bool{false, true} {
		var protected []rootfs.Protected
		name := "plain"
		if guarded {
			protected = []rootfs.Protected{{Path: filepath.Join(ws, "agents.hcl"), What: "the config file"}}
			name = "guarded"
		}
		b.Run(name, func(b *testing.B) {
			fs, err := rootfs.New(ws, false, protected)
			if err != nil {
				b.Fatal(err)
			}
			defer fs.Close()
			buf := make([]byte, 64)
			for b.Loop() {
				f, e := fs.OpenFile("src/pkg/a.go", 0, 0)
				if e != 0 {
					b.Fatal(e)
				}
				f.Read(buf)
				f.Close()
			}
		})
	}
}

// BenchmarkCallReuse measures one call of a reuse plugin whose instance is
// kept in the run's scope: argument validation, one request line, one
// answer line.
func BenchmarkCallReuse(b *testing.B) {
	r := newRuntime(b)
	p := load(b, r, spec(b, "reuse", guests["reuse"]))
	sc := NewScope()
	defer sc.Close()
	ctx := WithScopeOwner(WithScope(context.Background(), sc), "bench")
	c := loop.ToolCall{ID: "b", Name: "count", Arguments: `{}`}
	for b.Loop() {
		res, err := p.Call(ctx, c)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}
