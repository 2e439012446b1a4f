package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/config"
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
			p := load(b, r, pluginConfig(b, "echo", guests["echo"]))
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
	cp := pluginConfig(b, "cli", guests["cli"])
	cp.Tools = []*config.CLITool{{
		Name: "shout", InputSchema: json.RawMessage(`{"type":"object"}`),
		Argv: expr(b, `["cli", args.text]`), Stdin: expr(b, `args.text`),
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
	t := p.byName[tool]
	i := <-t.warm
	select {
	case <-i.ready:
	case <-i.done:
		tb.Fatal("pre-started instance ended before its call")
	}
	t.warm <- i
}

// BenchmarkCallCore measures a read_file call to the embedded core plugin,
// on a fresh instance (cold) and on a pre-started one (warm).
func BenchmarkCallCore(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name     string
		prestart bool
	}{{"cold", false}, {"warm", true}} {
		b.Run(mode.name, func(b *testing.B) {
			r := newRuntime(b)
			p := load(b, r, &config.Plugin{Name: "core", Builtin: "core",
				Limits: config.Limits{Memory: DefaultMemory, Timeout: 10 * time.Second, MaxOutput: 1 << 20},
				Mounts: []config.Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: "ro"}}})
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
