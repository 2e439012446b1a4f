package wasmbin

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
	m = AppendUleb32(m, uint32(len(data)))
	return append(m, data...)
}

// segment is an active segment of memory 0 at i32.const off.
func segment(off int32, init string) []byte {
	b := []byte{0, 0x41}
	b = AppendSleb32(b, off)
	b = append(b, 0x0b)
	b = AppendUleb32(b, uint32(len(init)))
	return append(b, init...)
}

func segments(segs ...[]byte) []byte {
	b := AppendUleb32(nil, uint32(len(segs)))
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
	bin, err := Parse(wasm, "")
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := Uleb32(wasm[bin.dataStart+1:])
	c, _, _ := Uleb32(wasm[bin.dataStart+1+n:])
	return c
}

// TestMergeDataSameMemory: joining data segments leaves a new instance's
// memory byte for byte as the original module's, with fewer segments, for
// the builtin core.wasm and for segments given out of order and across
// gaps wider than mergeGap.
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
			bin, err := Parse(wasm, "")
			if err != nil {
				t.Fatal(err)
			}
			merged, err := LimitMemory(wasm, bin, 1<<14)
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
			bin, err := Parse(wasm, "")
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
// the patched module itself: one allocation of the final size, not copies
// of the module on the way.
func TestLimitMemoryAllocates(t *testing.T) {
	wasm, bin := parsedCore(t)
	var out []byte
	alloc := leastOfThree(func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var err error
		out, err = LimitMemory(wasm, bin, 1<<14)
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
		bin, err := Parse(wasm, "")
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
		if _, err := Parse(out, ""); err != nil {
			t.Fatalf("merged module does not parse: %v", err)
		}
	})
}

// mergeData returns the module's data section (id byte and size included)
// as limitMemory writes it, or nil when planMerge keeps it as it is.
func mergeData(b []byte, bin *Module) []byte {
	m := planMerge(b, bin)
	if m == nil {
		return nil
	}
	return m.appendTo(make([]byte, 0, m.size), b)
}

// parsedCore returns the builtin core module and its parse.
func parsedCore(t testing.TB) ([]byte, *Module) {
	t.Helper()
	core, _ := plugins.BuiltinShared("core")
	wasm := []byte(core)
	bin, err := Parse(wasm, "")
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

// TestSplitDataKeeps: modules whose data the engine must apply keep their
// data section: a start function runs inside instantiation, data past the
// initial memory fails it, and the shapes planMerge leaves alone.
func TestSplitDataKeeps(t *testing.T) {
	two := segments(segment(10, "ab"), segment(20, "cd"))
	withStart := []byte("\x00asm\x01\x00\x00\x00")
	withStart = append(withStart, 1, 4, 1, 0x60, 0, 0) // type: () -> ()
	withStart = append(withStart, 3, 2, 1, 0)          // one function of it
	withStart = append(withStart, secMemory, 3, 1, 0, 1)
	withStart = append(withStart, secStart, 1, 0)
	withStart = append(withStart, 10, 4, 1, 2, 0, 0x0b) // its body: nothing
	withStart = append(withStart, secData)
	withStart = AppendUleb32(withStart, uint32(len(two)))
	withStart = append(withStart, two...)
	cases := map[string][]byte{
		"start section":      withStart,
		"past the memory":    dataModule(segments(segment(10, "ab"), segment(65536-1, "cd"))),
		"overlapping":        dataModule(segments(segment(10, "abcd"), segment(12, "XY"))),
		"data count":         dataModule(two, secDataCount, 1, 2),
		"one segment":        dataModule(segments(segment(10, "ab"))),
		"passive":            dataModule(segments(segment(10, "ab"), []byte{1, 1, 'x'})),
		"no memory, no data": []byte("\x00asm\x01\x00\x00\x00"),
	}
	for name, wasm := range cases {
		t.Run(name, func(t *testing.T) {
			bin, err := Parse(wasm, "")
			if err != nil {
				t.Fatal(err)
			}
			out, data, err := SplitData(wasm, bin, 1<<14)
			if err != nil {
				t.Fatal(err)
			}
			if data != nil {
				t.Fatalf("the data was split off: %d runs", len(data.Runs))
			}
			if bin.dataEnd > 0 {
				if ob, err := Parse(out, ""); err != nil || ob.dataEnd == 0 {
					t.Fatalf("the module lost its data section (%v)", err)
				}
			}
		})
	}
}
