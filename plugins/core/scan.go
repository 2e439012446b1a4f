package main

import (
	"math/bits"
)

// Newline scanning eight bytes at a time. In the guest (Go compiled to
// wasm), bytes.Count and bytes.IndexByte go byte by byte, and counting a
// file's lines that way would be most of a read_file call, which shows a
// numbered window of the file. A word at a time is several times faster
// there (and no slower natively).

const (
	lo7  = 0x7f7f7f7f7f7f7f7f
	nl8w = 0x0a0a0a0a0a0a0a0a // '\n' in every byte
)

// nlMask has the high bit of each byte of w that is '\n' set, and no other
// bit: exact, no carries cross bytes.
func nlMask(w uint64) uint64 {
	x := w ^ nl8w // zero where w has '\n'
	return ^(((x & lo7) + lo7) | x | lo7)
}

// countNewlines is bytes.Count(b, []byte("\n")).
func countNewlines(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(nlMask(le64(b)))
		b = b[8:]
	}
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// indexNewline is bytes.IndexByte(b, '\n').
func indexNewline(b []byte) int {
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		if m := nlMask(le64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

// skipLines returns the index just past the k-th '\n' of b, or len(b) when
// b has fewer.
func skipLines(b []byte, k int) int {
	i := 0
	for ; k > 0 && len(b)-i >= 8; i += 8 {
		m := nlMask(le64(b[i:]))
		if c := bits.OnesCount64(m); c < k {
			k -= c
			continue
		}
		for ; ; k-- { // the k-th is in this word
			j := bits.TrailingZeros64(m) / 8
			if k == 1 {
				return i + j + 1
			}
			m &= m - 1
		}
	}
	for ; k > 0 && i < len(b); i++ {
		if b[i] == '\n' {
			k--
		}
	}
	return i
}

// hasNUL is bytes.IndexByte(b, 0) >= 0, a word at a time.
func hasNUL(b []byte) bool {
	for len(b) >= 8 {
		x := le64(b)
		if ^(((x & lo7) + lo7) | x | lo7) != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// le64 is binary.LittleEndian.Uint64 (encoding/binary would bring reflect
// into core.wasm).
func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
