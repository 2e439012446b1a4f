package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/plugin"
)

// cacheEntries lists the files of a compilation cache directory.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tinyWasm is a WASI command of 41 bytes whose _start does nothing: quick
// to compile, and described as a wasi_cli module (no manifest).
var tinyWasm = []byte("\x00asm\x01\x00\x00\x00" +
	"\x01\x04\x01\x60\x00\x00" + // type: func()
	"\x03\x02\x01\x00" + // function 0 of that type
	"\x05\x03\x01\x00\x01" + // memory: 1 page
	"\x07\x0a\x01\x06_start\x00\x00" + // export _start
	"\x0a\x04\x01\x02\x00\x0b") // code: empty body

// TestInspectUsesTheCompilationCache: Inspect compiles into the cache of
// its options, as New does, and a second Inspect of the same module reuses
// that entry instead of adding one.
func TestInspectUsesTheCompilationCache(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "tiny.wasm")
	if err := os.WriteFile(src, tinyWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	info, err := Inspect(ctx, src, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != "wasi_cli" || info.Size != len(tinyWasm) || strings.Join(info.Exports, ",") != "_start" {
		t.Errorf("kind %q, size %d, exports %v; want wasi_cli, %d, [_start]", info.Kind, info.Size, info.Exports, len(tinyWasm))
	}
	first := cacheEntries(t, cache)
	if len(first) == 0 {
		t.Fatalf("nothing in the compilation cache %s after Inspect", cache)
	}
	if _, err := Inspect(ctx, src, Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	if again := cacheEntries(t, cache); len(again) != len(first) {
		t.Errorf("cache entries %d after a second Inspect, want the same %d: %v", len(again), len(first), again)
	}

	// NoCache keeps compiled code in memory: no directory is made.
	none := filepath.Join(t.TempDir(), "none")
	if _, err := Inspect(ctx, src, Options{NoCache: true, CacheDir: none}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NoCache: %s exists (%v)", none, err)
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "notwasm.wasm")
	if err := os.WriteFile(notWasm, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		want      []string
		is        error
	}{
		{"unknown builtin", "builtin:nope", []string{`no builtin plugin "nope"; builtins: core`}, nil},
		{"missing file", filepath.Join(dir, "missing.wasm"), []string{"missing.wasm does not exist"}, nil},
		{"not wasm", notWasm, []string{notWasm + ": "}, plugin.ErrNotWasm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			_, err := Inspect(context.Background(), tc.src, Options{CacheDir: cache})
			if err == nil {
				t.Fatal("Inspect succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

// TestInspectRefusesASharedCache: the cache of the options is checked as
// New checks it, before any code is compiled into it or read from it.
func TestInspectRefusesASharedCache(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cache's privacy is its access control list on Windows")
	}
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "tiny.wasm")
	if err := os.WriteFile(src, tinyWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Inspect(context.Background(), src, Options{CacheDir: cache})
	if !errors.Is(err, errNotPrivate) {
		t.Fatalf("Inspect with a cache others may write: %v, want the cache refused", err)
	}
	if got := cacheEntries(t, cache); len(got) != 0 {
		t.Errorf("compiled into a refused cache: %v", got)
	}
}
