package sandbox

import (
	"strings"
	"testing"
)

// An Output makes its tail buffer on the first write: one never written
// (or given only empty writes) has an empty tail and summary; after writes
// it keeps the head and the last TailSize bytes.
func TestOutputTail(t *testing.T) {
	w := NewOutput(16, nil)
	w.Write(nil)
	if w.ring != nil || w.Tail() != "" || w.Summary() != "" || w.Text() != "" {
		t.Fatalf("unwritten writer: ring %v, tail %q, summary %q", w.ring != nil, w.Tail(), w.Summary())
	}
	w.Write([]byte("first line\n"))
	if got := w.Tail(); got != "first line" {
		t.Errorf("tail %q, want %q", got, "first line")
	}
	w.Write([]byte(strings.Repeat("x", TailSize) + "last"))
	if got := w.Tail(); len(got) != TailSize || !strings.HasSuffix(got, "last") {
		t.Errorf("tail has %d bytes ending %q, want %d ending \"last\"", len(got), got[max(0, len(got)-4):], TailSize)
	}
	if !w.Truncated() || !strings.HasPrefix(w.Text(), "first line\nxxxxx") {
		t.Errorf("text %q", w.Text())
	}
}
