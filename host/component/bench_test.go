package component

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/internal/componenttest"
)

// The benchmarks measure what loading and calling costs for a component
// built by ComponentizeJS (testdata/js/tools, calling hello); with
// AGENTHOST_BENCH_KIND=rust for the one built from Rust (testdata/rust,
// reading a file through std::fs); and, when AGENTHOST_BENCH_COMPONENT
// names one, any other component: set AGENTHOST_BENCH_TOOL and
// AGENTHOST_BENCH_ARGS for its call, and AGENTHOST_BENCH_MOUNT to mount a
// directory at /data.
//
//	go test ./host/component -run '^$' -bench . -benchtime 5x
//	AGENTHOST_BENCH_KIND=rust go test ./host/component -run '^$' -bench . -benchtime 20x

func benchComponent(b *testing.B) (wasm []byte, tool, args string, sb *Sandbox) {
	if p := os.Getenv("AGENTHOST_BENCH_COMPONENT"); p != "" {
		w, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		sb = &Sandbox{}
		if dir := os.Getenv("AGENTHOST_BENCH_MOUNT"); dir != "" {
			sb = mountDir(b, dir)
		}
		return w, os.Getenv("AGENTHOST_BENCH_TOOL"), os.Getenv("AGENTHOST_BENCH_ARGS"), sb
	}
	if os.Getenv("AGENTHOST_BENCH_KIND") == "rust" {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a file to read\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		return rustComponent(b), "read-file", `{"path":"/data/a.txt"}`, mountDir(b, dir)
	}
	return jsComponent(b, "tools"), "hello", `{"name":"bench"}`, &Sandbox{}
}

// BenchmarkColdCompile loads the component with an empty compilation
// cache: parsing, checking and compiling every core module.
func BenchmarkColdCompile(b *testing.B) {
	wasm, _, _, _ := benchComponent(b)
	ctx := context.Background()
	for b.Loop() {
		rt := newRuntime(b, b.TempDir())
		k, err := Load(ctx, rt, wasm, Options{})
		if err != nil {
			b.Fatal(err)
		}
		k.Close(ctx)
		rt.Close(ctx)
	}
}

// BenchmarkCachedLoad loads the component in a new runtime whose
// compilation cache (on disk) already holds it: what a second run pays.
func BenchmarkCachedLoad(b *testing.B) {
	wasm, _, _, _ := benchComponent(b)
	ctx := context.Background()
	dir := b.TempDir()
	warm := newRuntime(b, dir)
	if k, err := Load(ctx, warm, wasm, Options{}); err != nil {
		b.Fatal(err)
	} else {
		k.Close(ctx)
	}
	for b.Loop() {
		rt := newRuntime(b, dir)
		k, err := Load(ctx, rt, wasm, Options{})
		if err != nil {
			b.Fatal(err)
		}
		k.Close(ctx)
		rt.Close(ctx)
	}
}

// BenchmarkCall calls a tool: fresh instances, arguments, the call, the
// result.
func BenchmarkCall(b *testing.B) {
	wasm, tool, args, sb := benchComponent(b)
	ctx := context.Background()
	k, err := Load(ctx, newRuntime(b, b.TempDir()), wasm, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close(ctx)
	for b.Loop() {
		if _, err := k.Call(ctx, tool, []byte(args), sb); err != nil {
			b.Fatal(err)
		}
	}
}

func mountDir(b *testing.B, dir string) *Sandbox {
	fs, err := newMountFS(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fs.Close() })
	return &Sandbox{Mounts: []Mount{{GuestPath: "/data", FS: fs, ReadOnly: true}}}
}

// BenchmarkParse reads components' binaries (the seeds of FuzzTypes): the
// component parser and its core module reader, which every load runs
// before compiling.
func BenchmarkParse(b *testing.B) {
	var wasms [][]byte
	for _, name := range []string{"abi.wasm", "wasi.wasm", "seed/componentize-js-tools.wasm"} {
		wasms = append(wasms, readTestdata(b, name))
	}
	wasms = append(wasms, componenttest.Nested("result", 6, 2), componenttest.Nested("variant", 2, 4), componenttest.Nested("record", 2, 3))
	b.ReportAllocs()
	for b.Loop() {
		for _, w := range wasms {
			c, err := parseComponent(w)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range c.modules {
				if _, err := parseCoreModule(m, 0); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
