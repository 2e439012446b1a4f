package sandbox

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidUTF8 is b as text, with each invalid byte sequence replaced by
// U+FFFD: what a guest writes is shown as text.
func ValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// SizeString is n bytes as the limits of a plugin block write it: 4MiB,
// 512KiB, 100B.
func SizeString(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
