package plugin

import (
	"context"
	"testing"
)

// TestReleaseBodies: the function bodies of a compiled module are
// released, and compilePatched releases them. It fails when a wazero
// release changes the types releaseBodies reads (it then releases
// nothing): check that wazero still reads bodies only while compiling and
// update releaseBodies.
func TestReleaseBodies(t *testing.T) {
	ctx := context.Background()
	wasm, bin := parsedLarge(t)
	patched, err := limitMemory(wasm, bin, 1<<14)
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t)
	cm, err := r.rt.CompileModule(ctx, patched)
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(ctx)
	if n := releaseBodies(cm); n < 1<<20 {
		t.Fatalf("released %d bytes of echo's bodies; want its code section, over 1 MB", n)
	}
	if n := releaseBodies(cm); n != 0 {
		t.Errorf("released %d bytes the second time; want 0", n)
	}
	if n := releaseBodies(nil); n != 0 {
		t.Errorf("released %d bytes of nil", n)
	}
	// What a compiled module keeps alive: a Go guest of core's old size
	// held 4.5 MB with its bodies, 2.3 MB without.
	kept := keptHeap(t, r, wasm, bin, "")
	t.Logf("a compiled echo module keeps %d kB of heap", kept>>10)
	if kept > 3<<20 {
		t.Errorf("a compiled echo module keeps %d kB of heap; want at most 3 MB (its bodies released)", kept>>10)
	}
}
