package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/componenttest"
)

// BenchmarkComponent measures a component plugin through Runtime.Load and
// Plugin.Call, for one built from Rust (std::fs reading a file of its
// mount) and one built by ComponentizeJS (hello): cold is a load with an
// empty compilation cache, cached a load in a new runtime whose on-disk
// cache holds the component (a second agenthost run), call one call in
// fresh instances.
//
//	go test ./host/plugin -run '^$' -bench Component -benchtime 5x
func BenchmarkComponent(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a file to read\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, tool, args string
		wasm             func() []byte
	}{
		{"rust", "read-file", `{"path":"/data/a.txt"}`, func() []byte {
			return componenttest.Rust(b, filepath.Join("..", "component", "testdata", "rust"), "rust-tools")
		}},
		{"js", "hello", `{"name":"bench"}`, func() []byte { return jsTools(b) }},
	} {
		wasm := c.wasm()
		spec := Spec{Name: c.name, Wasm: wasm, Limits: Limits{Timeout: time.Minute},
			Mounts: []Mount{{Name: "data", Host: dir, Guest: "/data"}}}
		load := func(cache string) {
			r, err := NewRuntime(ctx, cache)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Load(ctx, spec); err != nil {
				b.Fatal(err)
			}
			r.Close(ctx)
		}
		b.Run(c.name+"/cold", func(b *testing.B) {
			for b.Loop() {
				load(b.TempDir())
			}
		})
		b.Run(c.name+"/cached", func(b *testing.B) {
			cache := b.TempDir()
			load(cache)
			for b.Loop() {
				load(cache)
			}
		})
		// A cached load and its first call, which waits for the
		// compilation the load left to the background.
		b.Run(c.name+"/cached-first-call", func(b *testing.B) {
			cache := b.TempDir()
			load(cache)
			for b.Loop() {
				r, err := NewRuntime(ctx, cache)
				if err != nil {
					b.Fatal(err)
				}
				p, err := r.Load(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				if res := mustCall(b, p, c.tool, c.args); res.IsError {
					b.Fatalf("%s: %s", c.tool, res.Content)
				}
				r.Close(ctx)
			}
		})
		b.Run(c.name+"/call", func(b *testing.B) {
			r, err := NewRuntime(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(ctx)
			p, err := r.Load(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			if res := mustCall(b, p, c.tool, c.args); res.IsError {
				b.Fatalf("%s: %s", c.tool, res.Content)
			}
			for b.Loop() {
				mustCall(b, p, c.tool, c.args)
			}
		})
	}
}
