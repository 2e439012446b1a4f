package wasmbin

import (
	"bytes"
	"errors"
	"testing"
)

// TestCapMemories sets the maximum of every memory a module defines,
// keeps their flags and the other sections, and refuses a memory that
// starts above the limit.
func TestCapMemories(t *testing.T) {
	custom := AppendSection(nil, secCustom, AppendName(nil, "x"))
	// Two memories: min 1 without a maximum, shared min 2 max 9000.
	mems := []byte{2, 0, 1, 3, 2}
	mems = AppendUleb32(mems, 9000)
	mod := AppendSection(append([]byte("\x00asm\x01\x00\x00\x00"), custom...), secMemory, mems)
	out, err := CapMemories(mod, 300)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{2, 1, 1}
	want = AppendUleb32(want, 300)
	want = append(want, 3, 2)
	want = AppendUleb32(want, 300)
	if wantMod := AppendSection(append([]byte("\x00asm\x01\x00\x00\x00"), custom...), secMemory, want); !bytes.Equal(out, wantMod) {
		t.Fatalf("CapMemories:\n got % x\nwant % x", out, wantMod)
	}
	_, err = CapMemories(mod, 1)
	var e *MemoryLimitError
	if !errors.As(err, &e) || e.Min != 2 || e.Limit != 1 {
		t.Fatalf("a memory over the limit: got %v, want a MemoryLimitError for 2 pages over 1", err)
	}
}
