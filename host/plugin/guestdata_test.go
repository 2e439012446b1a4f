package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// splitMemory compiles wasm with compilePatched, as a plugin's load does
// (cached under the module's sum when the runtime has a cache directory),
// instantiates it with Runtime.instantiate and returns its memory as the
// data left it, and whether the host kept the data.
func splitMemory(t *testing.T, r *Runtime, wasm []byte) ([]byte, bool) {
	t.Helper()
	ctx := context.Background()
	bin, err := parseBinary(wasm)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	cm, err := r.compilePatched(ctx, wasm, bin, 1<<14, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(ctx)
	_, kept := cm.(*compiledModule)
	mod, err := r.instantiate(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	mem, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory unreadable")
	}
	return bytes.Clone(mem), kept
}

// TestSplitDataSameMemory: a module compiled without its data section
// starts with the memory the original module's instantiation gives, byte
// for byte, with the data in the cache or (without one) in memory.
func TestSplitDataSameMemory(t *testing.T) {
	core, _ := parsedCore(t)
	cases := map[string][]byte{
		"core.wasm": core,
		"echo.wasm": guests["echo"],
		"unsorted with gaps": dataModule(segments(
			segment(20000, "late"),
			segment(10, "ab"),
			segment(12, "cd"),
			segment(100, "ef"),
			segment(100+2+64, "gh"),
			segment(100+2+64+2+64+1, "ij"),
			segment(65536-3, "end"),
		)),
	}
	for name, wasm := range cases {
		for _, where := range []string{"cache", "memory"} {
			t.Run(name+" in "+where, func(t *testing.T) {
				// The test runtime compiles with the tests' shared cache;
				// the module data goes to a directory of the test's own,
				// or stays in memory.
				r := newRuntime(t)
				dir := ""
				if where == "cache" {
					dir = t.TempDir()
				}
				r.facts = loadcache.New(dir)
				got, kept := splitMemory(t, r, wasm)
				if !kept {
					t.Fatal("the module kept its data section")
				}
				want := initialMemory(t, wasm)
				if !bytes.Equal(got, want) {
					t.Fatalf("memory differs from the original module's (%d and %d bytes)", len(got), len(want))
				}
				files, _ := filepath.Glob(filepath.Join(dir, loadcache.DataDir, "*"))
				if where == "cache" && len(files) != 1 {
					t.Errorf("data files in the cache: %q; want one", files)
				}
			})
		}
	}
}

// TestSplitDataCache: a data file of the cache that differs from the module
// (another module's, truncated, overwritten) is written again before use;
// one changed after the load fails the instantiation with an error, and
// does not crash the host.
func TestSplitDataCache(t *testing.T) {
	core, _ := parsedCore(t)
	r := newRuntime(t)
	dir := t.TempDir()
	r.facts = loadcache.New(dir) // the module data (and facts) only
	want := initialMemory(t, core)
	sum := sha256.Sum256(core)
	path := filepath.Join(dir, loadcache.DataDir, hex.EncodeToString(sum[:])+"."+loadcache.DataFormat)
	for _, damage := range []func() error{
		func() error { return nil },
		func() error { return os.Truncate(path, 1000) },
		func() error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0xff
			return os.WriteFile(path, b, 0o600)
		},
		func() error { return os.Remove(path) },
	} {
		if err := damage(); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if got, _ := splitMemory(t, r, core); !bytes.Equal(got, want) {
			t.Fatal("memory differs from the original module's")
		}
	}

	ctx := context.Background()
	bin, _ := parseBinary(core)
	cm, err := r.compilePatched(ctx, core, bin, 1<<14, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(ctx)
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	mod, err := r.instantiate(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err == nil {
		mod.Close(ctx)
		t.Fatal("instantiated with a truncated data file")
	}
	if !strings.Contains(err.Error(), "the cache was changed") {
		t.Errorf("error %q does not say what happened", err)
	}
}

// TestSplitDataHeap: a compiled Go guest (examples/echo) does not keep its
// data on the heap: it keeps at least 1 MB less than the same module
// compiled with its data.
func TestSplitDataHeap(t *testing.T) {
	wasm := guests["echo"]
	bin, err := parseBinary(wasm)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	split := keptHeap(t, newRuntime(t), wasm, bin, hex.EncodeToString(sum[:]))
	r := newRuntime(t)
	ctx := context.Background()
	whole := leastOfThree(func() uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		patched, err := wasmbin.LimitMemory(wasm, bin, 1<<14)
		if err != nil {
			t.Fatal(err)
		}
		cm, err := r.rt.CompileModule(ctx, patched)
		if err != nil {
			t.Fatal(err)
		}
		patched = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(cm)
		cm.Close(ctx)
		return after.HeapAlloc - before.HeapAlloc
	})
	t.Logf("a compiled echo module keeps %d kB of heap, %d kB with its data", split>>10, whole>>10)
	if split+1<<20 > whole {
		t.Errorf("a compiled echo module keeps %d kB of heap, %d kB with its data; want at least 1 MB less", split>>10, whole>>10)
	}
}

// TestSplitDataUnsafeDir: a data directory another user could write is not
// used; the data then stays in memory and instances still start with the
// right memory.
func TestSplitDataUnsafeDir(t *testing.T) {
	core, _ := parsedCore(t)
	r := newRuntime(t)
	dir := t.TempDir()
	r.facts = loadcache.New(dir)
	data := filepath.Join(dir, loadcache.DataDir)
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	got, kept := splitMemory(t, r, core)
	if !kept {
		t.Fatal("the module kept its data section")
	}
	if !bytes.Equal(got, initialMemory(t, core)) {
		t.Fatal("memory differs from the original module's")
	}
	if files, _ := os.ReadDir(data); len(files) != 0 {
		t.Errorf("wrote %d files into a directory others can write", len(files))
	}
}
