package plugin

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/agenthost/agenthost/plugins"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// dataModule is a module with one memory of one page and the given data
// section body (segment count first).
func dataModule(data []byte, extra ...byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, secMemory, 3, 1, 0, 1) // one memory, min 1 page, no max
	m = append(m, extra...)
	m = append(m, secData)
	m = appendUleb(m, uint32(len(data)))
	return append(m, data...)
}

// segment is an active segment of memory 0 at i32.const off.
func segment(off int32, init string) []byte {
	b := []byte{0, 0x41}
	b = appendSleb32(b, off)
	b = append(b, 0x0b)
	b = appendUleb(b, uint32(len(init)))
	return append(b, init...)
}

func segments(segs ...[]byte) []byte {
	b := appendUleb(nil, uint32(len(segs)))
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

func segmentCount(t *testing.T, wasm []byte) uint32 {
	t.Helper()
	bin, err := parseBinary(wasm)
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := uleb32(wasm[bin.dataStart+1:])
	c, _, _ := uleb32(wasm[bin.dataStart+1+n:])
	return c
}

// TestMergeDataSameMemory: joining data segments leaves a new instance's
// memory byte for byte as the original module's, with fewer segments, for
// core.wasm (Go's linker: tens of thousands of segments) and for segments
// given out of order and across gaps wider than mergeGap.
func TestMergeDataSameMemory(t *testing.T) {
	core, ok := plugins.BuiltinShared("core")
	if !ok {
		t.Fatal("no builtin core")
	}
	cases := map[string][]byte{
		"core.wasm": core,
		"unsorted with gaps": dataModule(segments(
			segment(20000, "late"),
			segment(10, "ab"),
			segment(12, "cd"),
			segment(100, "ef"),
			segment(100+2+mergeGap, "gh"),
			segment(100+2+mergeGap+2+mergeGap+1, "ij"),
		)),
	}
	for name, wasm := range cases {
		t.Run(name, func(t *testing.T) {
			bin, err := parseBinary(wasm)
			if err != nil {
				t.Fatal(err)
			}
			merged, err := limitMemory(wasm, bin, 1<<14)
			if err != nil {
				t.Fatal(err)
			}
			if len(merged) != cap(merged) {
				t.Errorf("limitMemory made room for %d bytes and wrote %d; want one allocation of the final size", cap(merged), len(merged))
			}
			before, after := segmentCount(t, wasm), segmentCount(t, merged)
			if after >= before {
				t.Fatalf("segments: %d before, %d after; want fewer", before, after)
			}
			t.Logf("%d segments → %d, %d → %d bytes", before, after, len(wasm), len(merged))
			if !bytes.Equal(initialMemory(t, wasm), initialMemory(t, merged)) {
				t.Fatal("a new instance's memory differs after merging")
			}
		})
	}
}

// TestMergeDataLeavesOthers: segments whose order or numbering matters are
// not rewritten.
func TestMergeDataLeavesOthers(t *testing.T) {
	global := []byte{0, 0x23, 0, 0x0b, 1, 'x'} // offset global.get 0
	cases := map[string][]byte{
		"overlapping":   dataModule(segments(segment(10, "abcd"), segment(12, "XY"))),
		"data count":    dataModule(segments(segment(10, "ab"), segment(20, "cd")), secDataCount, 1, 2),
		"global offset": dataModule(segments(segment(10, "ab"), global)),
		"passive":       dataModule(segments(segment(10, "ab"), []byte{1, 1, 'x'})),
		"one segment":   dataModule(segments(segment(10, "ab"))),
		"apart":         dataModule(segments(segment(10, "ab"), segment(10+2+mergeGap+1, "cd"))),
	}
	for name, wasm := range cases {
		t.Run(name, func(t *testing.T) {
			bin, err := parseBinary(wasm)
			if err != nil {
				t.Fatal(err)
			}
			if got := mergeData(wasm, bin); got != nil {
				t.Fatalf("rewrote the data section: % x", got)
			}
		})
	}
}

// TestLimitMemoryAllocates: patching core.wasm allocates little more than
// the patched module itself (it used to allocate 3.4 times the module's
// size, the largest share of the heap at a run's peak RSS).
func TestLimitMemoryAllocates(t *testing.T) {
	wasm, bin := parsedCore(t)
	var out []byte
	alloc := leastOfThree(func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var err error
		out, err = limitMemory(wasm, bin, 1<<14)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc
	})
	t.Logf("%d-byte module patched into %d bytes with %d bytes allocated", len(wasm), len(out), alloc)
	if limit := uint64(len(out)) * 5 / 4; alloc > limit {
		t.Fatalf("allocated %d bytes for a %d-byte result; want at most %d", alloc, len(out), limit)
	}
}

// FuzzMergeData: whatever the data section holds, mergeData does not panic,
// and what it returns parses as a data section of the module.
func FuzzMergeData(f *testing.F) {
	f.Add(segments(segment(10, "ab"), segment(12, "cd"), segment(100, "ef")))
	f.Add(segments(segment(-1, "ab"), segment(0, "cd")))
	f.Add(segments(segment(10, "abcd"), segment(12, "XY")))
	f.Fuzz(func(t *testing.T, data []byte) {
		wasm := dataModule(data)
		bin, err := parseBinary(wasm)
		if err != nil {
			return
		}
		got := mergeData(wasm, bin)
		if got == nil {
			return
		}
		if len(got) != cap(got) {
			t.Fatalf("planned %d bytes, wrote %d", cap(got), len(got))
		}
		out := append(wasm[:bin.dataStart:bin.dataStart], got...)
		if _, err := parseBinary(out); err != nil {
			t.Fatalf("merged module does not parse: %v", err)
		}
	})
}

// TestCompileCollects: compiling a large module starts with a collection
// of what the load left and ends with one of the garbage its decoding left
// (a run's peak RSS is there); a small one has neither.
func TestCompileCollects(t *testing.T) {
	large, _ := parsedLarge(t)
	small := dataModule(segments(segment(10, "ab")))
	r := newRuntime(t)
	for _, c := range []struct {
		name    string
		wasm    []byte
		collect bool
	}{{"echo", large, true}, {"small", small, false}} {
		bin, err := parseBinary(c.wasm)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cm, err := r.compilePatched(context.Background(), c.wasm, bin, 1<<14, "")
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		cm.Close(context.Background())
		want := uint32(0)
		if c.collect {
			want = 2
		}
		if got := after.NumForcedGC - before.NumForcedGC; got != want {
			t.Errorf("%s (%d bytes): %d collections compiling it, want %d", c.name, len(c.wasm), got, want)
		}
		// The freed pages are given back too, not left for the
		// scavenger to return over the next seconds. (A collection
		// alone leaves tens of megabytes here; other goroutines of the
		// test process may allocate a little in between.)
		if kept := after.HeapIdle - after.HeapReleased; c.collect && kept > 8<<20 {
			t.Errorf("%s: %d kB of free heap still resident after compiling; want it given back", c.name, kept>>10)
		}
	}
}

// mergeData returns the module's data section (id byte and size included)
// as limitMemory writes it, or nil when planMerge keeps it as it is.
func mergeData(b []byte, bin *binary) []byte {
	m := planMerge(b, bin)
	if m == nil {
		return nil
	}
	return m.appendTo(make([]byte, 0, m.size), b)
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

// parsedLarge returns a module over a megabyte and its parse: the echo
// test guest, built with Go (core.wasm is smaller).
func parsedLarge(t testing.TB) ([]byte, *binary) {
	t.Helper()
	wasm := bytes.Clone(guests["echo"])
	if len(wasm) < collectAfter {
		t.Fatalf("the echo guest is %d bytes; the test needs a module of %d bytes or more", len(wasm), collectAfter)
	}
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
