// Package textcut cuts strings to a number of bytes without splitting a
// UTF-8 sequence: the one rule behind every bounded text the host shows
// or sends (reasons, messages, finish reasons); and, for text shown in a
// column, to a number of runes (Runes).
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Prefix is the longest prefix of s of at most n bytes that ends on a rune
// boundary; s itself when it is no longer than n.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Clip is Prefix with "…" added when s was cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "…"
}

// Runes is s cut to at most n runes, the last of them "…" when s was cut:
// text shown in a column n runes wide.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Line is s on one line, its runs of white space (line breaks included)
// made one space, cut as Runes cuts it.
func Line(s string, n int) string {
	return Runes(strings.Join(strings.Fields(s), " "), n)
}
