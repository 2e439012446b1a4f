//go:build linux || darwin || freebsd

package plugin

import (
	"context"
	"testing"
	"unsafe"
)

// A guest memory grows in place up to its maximum, never past it, and is
// unmapped only by release (wazero's Free leaves it to the instance).
func TestMmapMemoryGrowsInPlace(t *testing.T) {
	_, a := withInstanceMemory(context.Background())
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
	a.release()
	if m.Reallocate(page) != nil {
		t.Error("Reallocate after release succeeded")
	}
	a.release() // twice is harmless
}

// Without address space for the reservation the memory is a Go slice.
func TestMmapMemoryFallsBackToTheHeap(t *testing.T) {
	_, a := withInstanceMemory(context.Background())
	m := a.Allocate(0, 1<<62).(*mmapMemory) // no system reserves 4 EiB
	b := m.Reallocate(64 << 10)
	if len(b) != 64<<10 || !m.heap {
		t.Fatalf("Reallocate: len %d, heap %v", len(b), m.heap)
	}
	b[10] = 3
	if b2 := m.Reallocate(128 << 10); len(b2) != 128<<10 || b2[10] != 3 {
		t.Fatal("heap memory did not grow with its contents")
	}
	a.release()
	if m.Reallocate(64<<10) != nil {
		t.Error("Reallocate after release succeeded")
	}
}
