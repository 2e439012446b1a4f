// Package textcut cuts strings to a number of bytes without splitting a
// UTF-8 sequence: the one rule behind every bounded text the host shows
// or sends (reasons, messages, finish reasons).
package textcut

import "unicode/utf8"

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
