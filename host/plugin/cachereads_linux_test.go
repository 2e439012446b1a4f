package plugin

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// readCalls is the number of read system calls this process has made
// (syscr of /proc/self/io).
func readCalls(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no syscr in /proc/self/io")
	return 0
}

// TestCacheReadsBuffered: a module compiled from the cache on disk (the
// Extism SDK's count_vowels, about 5,000 functions) is read in a few
// system calls, not one for each function's offset, and runs.
func TestCacheReadsBuffered(t *testing.T) {
	wasm := sdkWasm(t, "count_vowels.wasm")
	dir := t.TempDir()
	ctx := context.Background()
	vowels := func(r *Runtime) {
		p := load(t, r, extismSpec(t, "vowels", wasm, inputTool("count_vowels", "")))
		res := mustCall(t, p, "count_vowels", `{"text":"cached"}`)
		var out struct{ Count int }
		if res.IsError || json.Unmarshal([]byte(res.Content), &out) != nil || out.Count != 2 {
			t.Fatalf("count_vowels(cached) = %+v, want count 2", res)
		}
	}
	for i := range 2 {
		r, err := NewRuntime(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		before := readCalls(t)
		vowels(r) // compiles, then from the cache
		reads := readCalls(t) - before
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: %d read calls", i+1, reads)
		if i == 1 && reads > 500 {
			t.Errorf("loading count_vowels from the cache took %d read calls, want a few dozen", reads)
		}
	}

	c, err := wazero.NewCompilationCacheWithDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if !bufferCacheReads(c) || !bufferCacheReads(c) {
		t.Error("bufferCacheReads does not recognise wazero's cache (a new wazero release?)")
	}
	if bufferCacheReads(wazero.NewCompilationCache()) {
		t.Error("bufferCacheReads changed a cache without files")
	}
}
