//go:build linux

package guestmem

import (
	"syscall"
	"unsafe"
)

// zeroOpen makes b, the open part of a released reservation (page
// aligned), all zero again, or returns false (the caller unmaps it).
// mincore tells the pages the guest touched: they are cleared by hand and
// stay resident, so the next instance does not fault them in again; the
// other pages (never touched, or swapped out) are dropped with
// MADV_DONTNEED, which makes them read as zero. Up to 2 MiB of open memory
// at 4 KiB pages; bigger memories are unmapped.
func zeroOpen(b []byte) bool {
	page := syscall.Getpagesize()
	pages := (len(b) + page - 1) / page
	var vecBuf [512]byte
	if len(b) == 0 || pages > len(vecBuf) {
		return false
	}
	vec := vecBuf[:pages]
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return false
	}
	dropped := 0
	for i := 0; i < pages; {
		resident := vec[i]&1 != 0
		j := i + 1
		for j < pages && (vec[j]&1 != 0) == resident {
			j++
		}
		lo, hi := i*page, min(j*page, len(b))
		if resident {
			clear(b[lo:hi])
		} else if dropped++; dropped > 8 {
			// Fragmented: drop the whole range in one call.
			return syscall.Madvise(b, syscall.MADV_DONTNEED) == nil
		} else if syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED) != nil {
			return false
		}
		i = j
	}
	return true
}
