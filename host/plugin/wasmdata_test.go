package plugin

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/internal/wasmbin"
	"github.com/agenthost/agenthost/plugins"
)

// Small modules with data segments, for the tests of the data the host
// writes (guestdata_test.go); internal/wasmbin tests the rewriting itself.

// dataModule is a module with one memory of one page and the given data
// section body (segment count first).
func dataModule(data []byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, 5, 3, 1, 0, 1) // memory section: one memory, min 1 page, no max
	m = append(m, 11)            // data section
	m = wasmbin.AppendUleb32(m, uint32(len(data)))
	return append(m, data...)
}

// segment is an active segment of memory 0 at i32.const off.
func segment(off int32, init string) []byte {
	b := []byte{0, 0x41}
	b = wasmbin.AppendSleb32(b, off)
	b = append(b, 0x0b)
	b = wasmbin.AppendUleb32(b, uint32(len(init)))
	return append(b, init...)
}

func segments(segs ...[]byte) []byte {
	b := wasmbin.AppendUleb32(nil, uint32(len(segs)))
	for _, s := range segs {
		b = append(b, s...)
	}
	return b
}

// initialMemory instantiates wasm without running any start function and
// returns its memory as the data segments left it.
func initialMemory(t *testing.T, wasm []byte) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	mem, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory unreadable")
	}
	return bytes.Clone(mem)
}

// parsedCore returns the builtin core module and its parse.
func parsedCore(t testing.TB) ([]byte, *binary) {
	t.Helper()
	core, _ := plugins.BuiltinShared("core")
	wasm := []byte(core)
	bin, err := parseBinary(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return wasm, bin
}

// leastOfThree returns the least of three measurements: other goroutines
// of the test process can only add to what one try sees.
func leastOfThree(measure func() uint64) uint64 {
	least := ^uint64(0)
	for range 3 {
		least = min(least, measure())
	}
	return least
}

// keptHeap returns the heap a module compiled with compilePatched keeps
// alive (sum as compilePatched takes it), the least of three tries.
func keptHeap(t *testing.T, r *Runtime, wasm []byte, bin *binary, sum string) uint64 {
	t.Helper()
	ctx := context.Background()
	return leastOfThree(func() uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cm, err := r.compilePatched(ctx, wasm, bin, 1<<14, sum)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(cm)
		cm.Close(ctx)
		return after.HeapAlloc - before.HeapAlloc
	})
}
