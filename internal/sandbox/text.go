package sandbox

import (
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
