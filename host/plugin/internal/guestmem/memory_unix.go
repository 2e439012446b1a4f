//go:build linux || darwin || freebsd

package guestmem

import (
	"context"
	"strconv"
	"sync"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// By default wazero keeps a guest's memory in a Go slice and copies it to
// a bigger one whenever the guest grows it: a Go guest grows its memory a few times while starting,
// so every instance start would copy megabytes, leave the old copies to
// the garbage collector, and count the whole guest memory in the heap that
// paces collections. Here each memory reserves its maximum (the plugin's
// limits.memory, which wasmbin.LimitMemory wrote into the module) as
// address space with no access, and growing only opens more of it to
// reading and writing: the memory never moves and pages cost nothing until
// touched. wazero's experimental.MemoryAllocator is the public way in.
//
// The reservation is unmapped (or zeroed and kept for the next instance:
// see spares below) by the instance when its guest can no longer run
// (Allocator.Release, after the module is closed), never by wazero's Free:
// wazero frees a module's memory when the module is closed, and a runtime
// being closed closes modules whose guest may still be running on another
// goroutine, which an unmapped region would crash.

// Allocator hands out the memories of one instantiation and
// remembers them until Release.
type Allocator struct {
	mu   sync.Mutex
	mems []*mmapMemory
}

// With returns ctx making wazero allocate the memories of the
// next instantiation with a new Allocator, and the Allocator.
func With(ctx context.Context) (context.Context, *Allocator) {
	a := &Allocator{}
	return experimental.WithMemoryAllocator(ctx, a), a
}

func (a *Allocator) Allocate(_, max uint64) experimental.LinearMemory {
	m := &mmapMemory{max: max}
	a.mu.Lock()
	a.mems = append(a.mems, m)
	a.mu.Unlock()
	return m
}

// Release unmaps the memories (or keeps them, zeroed, for the next
// instance); the guest must not run any more. A nil Allocator has none.
func (a *Allocator) Release() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.mems {
		m.unmap()
	}
	a.mems = nil
}

// mmapMemory is one linear memory: a reservation of max bytes, of which
// the first len(buf) are readable and writable.
type mmapMemory struct {
	mu   sync.Mutex
	max  uint64
	res  []byte // the whole reservation; nil before the first Reallocate and after Free
	open uint64 // bytes open to reading and writing
	dead bool
	heap bool // the reservation failed: buf, a Go slice, holds the memory
	buf  []byte
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead || size > m.max {
		return nil
	}
	if m.res == nil && !m.heap {
		n := m.max
		if n == 0 {
			n = 1 // a zero-length mapping is an error; the memory stays empty
		}
		if res, open := spares.take(n); res != nil {
			m.res, m.open = res, open
		} else if res, err := unix.Mmap(-1, 0, int(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON); err != nil {
			// No address space for the reservation (ulimit -v): grow a Go
			// slice by copying, as wazero does by default.
			m.heap = true
		} else {
			m.res = res
		}
	}
	if m.heap {
		if size > uint64(len(m.buf)) {
			m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
		}
		return m.buf[:size:size]
	}
	if size > m.open {
		if err := unix.Mprotect(m.res[m.open:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
		m.open = size
	}
	return m.res[:size:size]
}

// Free is wazero's: see the note at the top of the file.
func (m *mmapMemory) Free() {}

func (m *mmapMemory) unmap() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.res != nil && !spares.put(m.res, m.open) {
		unix.Munmap(m.res)
	}
	m.res, m.open, m.dead, m.buf = nil, 0, true, nil
}

// Reservations are reused: an instance per call (Extism plugins, one-call
// tools) otherwise paid a mapping, a change of protection, an unmapping
// and a page fault for each page it touched. A released reservation whose
// open part zeroOpen can make zero again (memory_linux.go: the pages the
// guest touched are cleared and stay resident) is kept for the next memory
// of the same maximum; others are unmapped as before. Nothing of one
// instance's memory reaches the next: every byte it could touch is zero
// again before the reservation is kept.
var spares spareReservations

const maxSpares = 8 // reservations kept

type spareReservations struct {
	mu   sync.Mutex
	list []spareReservation
}

type spareReservation struct {
	res  []byte
	open uint64 // bytes open to reading and writing, all zero
}

// take returns a kept reservation of n bytes and how many of its bytes are
// open, or nil.
func (s *spareReservations) take(n uint64) ([]byte, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.list) - 1; i >= 0; i-- {
		if r := s.list[i]; uint64(len(r.res)) == n {
			s.list = append(s.list[:i], s.list[i+1:]...)
			return r.res, r.open
		}
	}
	return nil, 0
}

// put keeps res (open bytes of it open) for reuse, zeroing what was open;
// false: the caller unmaps it.
func (s *spareReservations) put(res []byte, open uint64) bool {
	if strconv.IntSize < 64 {
		return false // keeping reservations would crowd a 32-bit address space
	}
	if open > 0 && !zeroOpen(res[:open]) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) >= maxSpares {
		return false
	}
	s.list = append(s.list, spareReservation{res: res, open: open})
	return true
}
