package main

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestNewlineScan: the word-at-a-time scanners agree with package bytes on
// random texts of every length up to 100 bytes, dense and sparse in
// newlines, with bytes next to '\n' and NUL in value (0x09, 0x0b, 0x8a, 0x01, 0x80, 0xff),
// and with or without NULs.
func TestNewlineScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'\n', '\n', 'a', 0x09, 0x0b, 0x8a, 0xff, 0x01, 0x80, '\r'}
	for n := range 100 {
		for range 50 {
			b := make([]byte, n)
			dense := rng.IntN(2) == 0
			nul := rng.IntN(3) == 0
			for i := range b {
				if nul && rng.IntN(30) == 0 {
					b[i] = 0
				} else if dense {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				} else if rng.IntN(20) == 0 {
					b[i] = '\n'
				} else {
					b[i] = byte(rng.IntN(256))
				}
			}
			if got, want := countNewlines(b), bytes.Count(b, []byte("\n")); got != want {
				t.Fatalf("countNewlines(%q) = %d, want %d", b, got, want)
			}
			if got, want := hasNUL(b), bytes.IndexByte(b, 0) >= 0; got != want {
				t.Fatalf("hasNUL(%q) = %v, want %v", b, got, want)
			}
			if got, want := indexNewline(b), bytes.IndexByte(b, '\n'); got != want {
				t.Fatalf("indexNewline(%q) = %d, want %d", b, got, want)
			}
			for k := 0; k <= bytes.Count(b, []byte("\n"))+1; k++ {
				want, rest := 0, b
				for range k {
					i := bytes.IndexByte(rest, '\n')
					if i < 0 {
						want = len(b)
						break
					}
					want += i + 1
					rest = rest[i+1:]
				}
				if got := skipLines(b, k); got != want {
					t.Fatalf("skipLines(%q, %d) = %d, want %d", b, k, got, want)
				}
			}
		}
	}
}
