//go:build linux || darwin || freebsd

package guestmem

import (
	"context"
	"strconv"
	"testing"
	"unsafe"
)

// A guest memory grows in place up to its maximum, never past it, and is
// unmapped only by release (wazero's Free leaves it to the instance).
func TestMmapMemoryGrowsInPlace(t *testing.T) {
	_, a := With(context.Background())
	const page = 64 << 10
	m := a.Allocate(0, 4*page)
	b := m.Reallocate(page)
	if len(b) != page {
		t.Fatalf("first Reallocate: len %d", len(b))
	}
	b[page-1] = 7
	b2 := m.Reallocate(3 * page)
	if len(b2) != 3*page || unsafe.SliceData(b2) != unsafe.SliceData(b) || b2[page-1] != 7 || b2[3*page-1] != 0 {
		t.Fatalf("grown memory moved or lost its contents")
	}
	b2[3*page-1] = 1
	if m.Reallocate(5*page) != nil {
		t.Error("Reallocate past the maximum succeeded")
	}
	m.Free()
	if b3 := m.Reallocate(4 * page); len(b3) != 4*page || b3[page-1] != 7 {
		t.Error("wazero's Free unmapped the memory")
	}
	a.Release()
	if m.Reallocate(page) != nil {
		t.Error("Reallocate after release succeeded")
	}
	a.Release() // twice is harmless
}

// Without address space for the reservation the memory is a Go slice.
func TestMmapMemoryFallsBackToTheHeap(t *testing.T) {
	_, a := With(context.Background())
	m := a.Allocate(0, 1<<62).(*mmapMemory) // no system reserves 4 EiB
	b := m.Reallocate(64 << 10)
	if len(b) != 64<<10 || !m.heap {
		t.Fatalf("Reallocate: len %d, heap %v", len(b), m.heap)
	}
	b[10] = 3
	if b2 := m.Reallocate(128 << 10); len(b2) != 128<<10 || b2[10] != 3 {
		t.Fatal("heap memory did not grow with its contents")
	}
	a.Release()
	if m.Reallocate(64<<10) != nil {
		t.Error("Reallocate after release succeeded")
	}
}

// A released memory's reservation serves the next memory of the same
// maximum, and all of it reads as zero again, whichever pages the first
// guest wrote (a few, or every other one: many runs of untouched pages).
func TestMmapMemoryReuseIsZeroed(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("reservations are not kept on 32-bit systems")
	}
	const page = 64 << 10
	const max = 37 * page // a maximum no other test uses
	for _, stride := range []int{9 * page, 8 << 10} {
		_, a := With(context.Background())
		b := a.Allocate(0, max).Reallocate(20 * page)
		for i := 3; i < len(b); i += stride {
			b[i] = 0xff
		}
		b[len(b)-1] = 0xff
		base := unsafe.SliceData(b)
		a.Release()
		kept := false
		spares.mu.Lock()
		for _, r := range spares.list {
			kept = kept || unsafe.SliceData(r.res) == base
		}
		spares.mu.Unlock()
		if !kept {
			t.Fatalf("stride %d: the released reservation was not kept", stride)
		}

		_, a2 := With(context.Background())
		m2 := a2.Allocate(0, max)
		b2 := m2.Reallocate(page)
		if unsafe.SliceData(b2) != base {
			t.Fatalf("stride %d: the reservation was not reused", stride)
		}
		b2 = m2.Reallocate(30 * page)
		for i, c := range b2 {
			if c != 0 {
				t.Fatalf("stride %d: byte %d of the reused memory is %d, want 0", stride, i, c)
			}
		}
		b2[5] = 1
		a2.Release()
	}
}
