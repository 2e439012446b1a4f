package component

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/internal/npmtest"
	"github.com/agenthost/agenthost/internal/rootfs"
)

// componentizeVersion is the ComponentizeJS release the tests build their
// JavaScript components with; jcoVersion the jco release that turns the
// text format into binaries (testdata/*.wat).
const (
	componentizeVersion = "0.23.0"
	jcoVersion          = "1.35.0"
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

func failure(t testing.TB, err error, kind FailureKind) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *Failure of kind %s", err, err, kind)
	}
	if f.Kind != kind {
		t.Fatalf("failure kind = %s (%v), want %s", f.Kind, f.Err, kind)
	}
	return f
}

// componentizeBin installs ComponentizeJS (and jco) from npm, once.
func componentizeBin(t testing.TB) string {
	t.Helper()
	return npmtest.Install(t, "building JavaScript components", "componentize-js-"+componentizeVersion+"-jco-"+jcoVersion,
		"@bytecodealliance/componentize-js@"+componentizeVersion, "@bytecodealliance/jco@"+jcoVersion, "@bytecodealliance/wizer@10.0.0")
}

// buildCache is where built components are kept, by a hash of their
// sources and the toolchain's version.
func buildCache(t testing.TB) string {
	t.Helper()
	root := os.Getenv("AGENTHOST_NPM_CACHE")
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory for built components (%v): set AGENTHOST_NPM_CACHE", err)
		}
		root = filepath.Join(c, "agenthost-tests", "npm")
	}
	dir := filepath.Join(root, "components")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var buildMu sync.Mutex

// jsComponent builds testdata/js/<name> with ComponentizeJS, or takes the
// component built from the same sources before. The WASI 0.2 WIT packages
// the world uses come from jco's copy.
func jsComponent(t testing.TB, name string) []byte {
	t.Helper()
	src := filepath.Join("testdata", "js", name)
	buildMu.Lock()
	defer buildMu.Unlock()
	bin := componentizeBin(t)
	out := filepath.Join(buildCache(t), name+"-"+sourceHash(t, src)+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b
	}
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	wasi := filepath.Join(filepath.Dir(bin), "@bytecodealliance", "jco", "lib", "wit", "builtin", "0.2.12")
	ents, err := os.ReadDir(wasi)
	if err != nil {
		t.Skipf("jco's WASI WIT files are not where expected (%v)", err)
	}
	for _, e := range ents {
		if err := os.CopyFS(filepath.Join(work, "wit", "deps", e.Name()), os.DirFS(filepath.Join(wasi, e.Name()))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tmp := filepath.Join(work, "out.wasm")
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "componentize-js"), "app.js", "--wit", "wit", "-o", tmp)
	cmd.Dir = work
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("componentize-js %s: %v\n%s", name, err, b)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		t.Fatal(err)
	}
	return b
}

// sourceHash hashes a component's sources and the toolchain's version.
func sourceHash(t testing.TB, src string) string {
	t.Helper()
	h := sha256.New()
	h.Write([]byte("componentize-js " + componentizeVersion + "\n"))
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		h.Write([]byte(filepath.ToSlash(rel) + "\n"))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
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

// rustCandidates are the rustc commands and WASI targets tried, newest
// first (Debian's rustc has the older wasm32-wasi).
var rustCandidates = [][2]string{{"rustc", "wasm32-wasip1"}, {"rustc", "wasm32-wasi"}, {"/usr/bin/rustc", "wasm32-wasi"}}

// rustComponent builds testdata/rust into a component: rustc makes a WASI
// preview 1 module, jco embeds the WIT and adapts it to WASI 0.2 with its
// preview 1 reactor adapter. The result is cached like jsComponent's.
func rustComponent(t testing.TB) []byte {
	t.Helper()
	src := filepath.Join("testdata", "rust")
	buildMu.Lock()
	defer buildMu.Unlock()
	bin := componentizeBin(t)
	work := t.TempDir()
	core := filepath.Join(work, "core.wasm")
	var used [2]string
	var tried []string
	for _, c := range rustCandidates {
		cmd := exec.Command(c[0], "--target", c[1], "--crate-type", "cdylib", "-O", "-C", "strip=symbols",
			"-o", core, filepath.Join(src, "lib.rs"))
		if b, err := cmd.CombinedOutput(); err != nil {
			tried = append(tried, fmt.Sprintf("%s --target %s: %v %s", c[0], c[1], err, firstLine(b)))
			continue
		}
		used = c
		break
	}
	if used[0] == "" {
		t.Skipf("no rustc with a WASI target (Debian: apt-get install rustc libstd-rust-dev-wasm32): %s", strings.Join(tried, "; "))
	}
	version, _ := exec.Command(used[0], "--version").Output()
	h := sha256.New()
	for _, p := range []string{"lib.rs", "world.wit"} {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	fmt.Fprintf(h, "%s %s jco %s", version, used[1], jcoVersion)
	out := filepath.Join(buildCache(t), "rust-"+hex.EncodeToString(h.Sum(nil))[:16]+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b
	}
	jco := filepath.Join(filepath.Dir(bin), "@bytecodealliance", "jco")
	script := "import { componentEmbed, componentNew } from " +
		strconv.Quote((&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(jco, "dist", "api.js"))}).String()) + ";\n" +
		"import { readFileSync, writeFileSync } from 'node:fs';\n" +
		"const [core, wit, world, adapter, out] = process.argv.slice(2);\n" +
		"const embedded = await componentEmbed({ binary: readFileSync(core), witSource: readFileSync(wit, 'utf8'), world });\n" +
		"writeFileSync(out, await componentNew(embedded, [['wasi_snapshot_preview1', readFileSync(adapter)]]));\n"
	if err := os.WriteFile(filepath.Join(work, "build.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(work, "component.wasm")
	cmd := exec.Command("node", filepath.Join(work, "build.mjs"), core, filepath.Join(src, "world.wit"), "rust-tools",
		filepath.Join(jco, "lib", "wasi_snapshot_preview1.reactor.wasm"), tmp)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jco embed/new: %v\n%s", err, b)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
