// Package componenttest builds WASI 0.2 components for tests from
// sources: JavaScript with ComponentizeJS, Rust (a WASI preview 1 cdylib
// adapted by jco). The toolchain comes from npm through npmtest, and each
// build is kept in a cache directory by a hash of its sources and the
// toolchain, so a component is built once per machine. Tests skip with a
// message without Node, npm or rustc.
package componenttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/internal/npmtest"
)

// ComponentizeVersion is the ComponentizeJS release the tests build their
// JavaScript components with; JcoVersion the jco release that embeds WIT,
// adapts modules and turns the text format into binaries.
const (
	ComponentizeVersion = "0.23.0"
	JcoVersion          = "1.35.0"
)

// TB is what the builders need of a test (testing.TB has it).
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// Toolchain installs ComponentizeJS (and jco) from npm, once, and returns
// its node_modules/.bin directory.
func Toolchain(t TB) string {
	t.Helper()
	return npmtest.Install(t, "building WASI 0.2 components", "componentize-js-"+ComponentizeVersion+"-jco-"+JcoVersion,
		"@bytecodealliance/componentize-js@"+ComponentizeVersion, "@bytecodealliance/jco@"+JcoVersion, "@bytecodealliance/wizer@10.0.0")
}

// Cache is where built components are kept.
func Cache(t TB) string {
	t.Helper()
	dir := filepath.Join(npmtest.CacheRoot(t, "built components"), "components")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var buildMu sync.Mutex

// JS builds the JavaScript component in src (app.js and wit/, whose world
// may use WASI 0.2 packages: they come from jco's copy) with
// ComponentizeJS, or returns the one built from the same sources before.
// name names it in the cache.
func JS(t TB, src, name string) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	return cached(t, name+"-"+sourceHash(t, src), func(bin, work string) []byte {
		return componentizeJS(t, bin, work, src, name)
	})
}

// componentizeJS builds src with ComponentizeJS in work.
func componentizeJS(t TB, bin, work, src, name string) []byte {
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
	return b
}

// save writes a built component into the cache: beside, then renamed
// into place, so no reader sees half of it.
func save(t TB, out string, b []byte) {
	t.Helper()
	if err := os.WriteFile(out+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		t.Fatal(err)
	}
}

// cached returns the component kept in the cache under key, or builds it
// with make (given the toolchain's bin directory and a scratch directory)
// and keeps it. A component built before needs no toolchain: the cache is
// looked at first, so a run without npm installs still uses what an
// earlier run (AGENTHOST_NPM_TESTS=1) built.
func cached(t TB, key string, make func(bin, work string) []byte) []byte {
	t.Helper()
	out := filepath.Join(Cache(t), key+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b
	}
	bin := Toolchain(t)
	work, err := os.MkdirTemp("", "component-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	b := make(bin, work)
	save(t, out, b)
	return b
}

// hashFiles writes the named files of dir into h.
func hashFiles(t TB, h io.Writer, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
}

// sourceHash hashes a component's sources and the toolchain's version.
func sourceHash(t TB, src string) string {
	t.Helper()
	h := sha256.New()
	h.Write([]byte("componentize-js " + ComponentizeVersion + "\n"))
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

// rustCandidates are the rustc commands and WASI targets tried, newest
// first (Debian's rustc has the older wasm32-wasi).
var rustCandidates = [][2]string{{"rustc", "wasm32-wasip1"}, {"rustc", "wasm32-wasi"}, {"/usr/bin/rustc", "wasm32-wasi"}}

// Rust builds src/lib.rs into a component of the world named world in
// src/world.wit: rustc makes a WASI preview 1 module, jco embeds the WIT
// and adapts it to WASI 0.2 with its preview 1 reactor adapter. The
// result is cached like JS's.
func Rust(t TB, src, world string) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	bin := Toolchain(t)
	work, err := os.MkdirTemp("", "rust-component-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
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
	hashFiles(t, h, src, "lib.rs", "world.wit")
	fmt.Fprintf(h, "%s %s jco %s", version, used[1], JcoVersion)
	out := filepath.Join(Cache(t), "rust-"+hex.EncodeToString(h.Sum(nil))[:16]+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b
	}
	b := adapt(t, bin, core, filepath.Join(src, "world.wit"), world, "reactor", work)
	save(t, out, b)
	return b
}

// adapt makes a component of a WASI preview 1 module (core, in work):
// jco embeds the world of the WIT file and adapts the module with its
// preview 1 adapter of the given model ("reactor" or "command").
func adapt(t TB, bin, core, wit, world, model, work string) []byte {
	t.Helper()
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
	cmd := exec.Command("node", filepath.Join(work, "build.mjs"), core, wit, world,
		filepath.Join(jco, "lib", "wasi_snapshot_preview1."+model+".wasm"), tmp)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jco embed/new: %v\n%s", err, b)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// GoCommand builds the Go main package in src into a command component:
// go build for wasip1 makes a WASI preview 1 command, and jco adapts it
// with its preview 1 command adapter, so the component exports
// wasi:cli/run (a world with nothing else: src/world.wit). Cached like
// the others, by the sources, the Go version and jco's.
func GoCommand(t TB, src, name string) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	version, err := exec.Command(goBin, "env", "GOVERSION").Output()
	if err != nil {
		t.Skipf("no go toolchain to build %s: %v", name, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s jco %s\n", version, JcoVersion)
	hashFiles(t, h, src, "main.go", "world.wit")
	return cached(t, name+"-"+hex.EncodeToString(h.Sum(nil))[:16], func(bin, work string) []byte {
		core := filepath.Join(work, "core.wasm")
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", core, filepath.Join(src, "main.go"))
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s for wasip1: %v\n%s", src, err, b)
		}
		return adapt(t, bin, core, filepath.Join(src, "world.wit"), "command", "command", work)
	})
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
