package component

import (
	"bytes"
	"context"
	"errors"
	"github.com/agenthost/agenthost/internal/sandbox"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/internal/componenttest"
	"github.com/agenthost/agenthost/internal/rootfs"
)

func newRuntime(t testing.TB, cacheDir string) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithCloseOnContextDone(true)
	if cacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadTestdata(t testing.TB, name string, opts Options) *Component {
	t.Helper()
	ctx := context.Background()
	k, err := Load(ctx, newRuntime(t, ""), readTestdata(t, name), opts)
	if err != nil {
		t.Fatalf("Load %s: %v", name, err)
	}
	t.Cleanup(func() { k.Close(ctx) })
	return k
}

// call runs a tool with a timeout and returns its outcome or failure.
func callTool(t testing.TB, k *Component, tool, args string, sb *Sandbox) (*Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return k.Call(ctx, tool, []byte(args), sb)
}

func mustCall(t testing.TB, k *Component, tool, args string, sb *Sandbox) *Outcome {
	t.Helper()
	out, err := callTool(t, k, tool, args, sb)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	return out
}

func failure(t testing.TB, err error, kind sandbox.FailureKind) *sandbox.Failure {
	t.Helper()
	var f *sandbox.Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *sandbox.Failure of kind %s", err, err, kind)
	}
	if f.Kind != kind {
		t.Fatalf("failure kind = %s (%v), want %s", f.Kind, f.Err, kind)
	}
	return f
}

// componentizeBin installs ComponentizeJS (and jco) from npm, once.
func componentizeBin(t testing.TB) string { return componenttest.Toolchain(t) }

// buildCache is where built components are kept.
func buildCache(t testing.TB) string { return componenttest.Cache(t) }

// jsComponent builds testdata/js/<name> with ComponentizeJS, or takes the
// component built from the same sources before.
func jsComponent(t testing.TB, name string) []byte {
	return componenttest.JS(t, filepath.Join("testdata", "js", name), name)
}

// rustComponent builds testdata/rust into a component (cached).
func rustComponent(t testing.TB) []byte {
	return componenttest.Rust(t, filepath.Join("testdata", "rust"), "rust-tools")
}

// watToWasm turns components in the text format into binaries with jco
// (wasm-tools parse), in one Node process.
func watToWasm(t testing.TB, wats ...string) [][]byte {
	t.Helper()
	bin := componentizeBin(t)
	dir := t.TempDir()
	api := filepath.Join(filepath.Dir(bin), "@bytecodealliance", "jco", "dist", "api.js")
	script := "import { parse } from " + strconv.Quote((&url.URL{Scheme: "file", Path: filepath.ToSlash(api)}).String()) + ";\n" +
		"import { readFileSync, writeFileSync } from 'node:fs';\n" +
		"for (let i = 2; i < process.argv.length; i += 2) writeFileSync(process.argv[i + 1], await parse(readFileSync(process.argv[i], 'utf8')));\n"
	if err := os.WriteFile(filepath.Join(dir, "parse.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(dir, "parse.mjs")}
	for i, w := range wats {
		in := filepath.Join(dir, strconv.Itoa(i)+".wat")
		if err := os.WriteFile(in, []byte(w), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, in, filepath.Join(dir, strconv.Itoa(i)+".wasm"))
	}
	cmd := exec.Command("node", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("jco parse: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	out := make([][]byte, len(wats))
	for i := range wats {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func newMountFS(dir string) (*rootfs.FS, error) { return rootfs.New(dir, true, nil) }
