// Package toolname holds the one rule for the names of tools offered to a
// model: what OpenAI-compatible APIs accept as a function name. host/config
// checks tool, tool-block and agent names against it (subagents are offered
// as tools), and host/plugin checks the tool names of manifests and tool
// specs. It is a leaf: it imports only the standard library.
package toolname

import "strings"

// Pattern is the rule as a regular expression, for messages: letters,
// digits, '_' and '-', 1 to 64 of them.
const Pattern = `^[a-zA-Z0-9_-]{1,64}$`

// MaxLen is the longest valid name, in bytes.
const MaxLen = 64

// Valid reports whether name matches Pattern.
func Valid(name string) bool {
	if len(name) == 0 || len(name) > MaxLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !allowed(name[i]) {
			return false
		}
	}
	return true
}

// Fix turns name into a valid name, for "try ..." hints: every other
// character becomes '_', and the result is cut at MaxLen bytes; an empty
// name becomes "tool".
func Fix(name string) string {
	var sb strings.Builder
	for _, r := range name {
		if sb.Len() == MaxLen {
			break
		}
		if r < 0x80 && allowed(byte(r)) {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	if sb.Len() == 0 {
		return "tool"
	}
	return sb.String()
}

func allowed(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
