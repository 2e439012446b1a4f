package plugin

import (
	"strings"
	"testing"
)

// A capWriter makes its tail buffer on the first write: one never written
// (or given only empty writes) has an empty tail and summary; after writes
// it keeps the head and the last tailSize bytes.
func TestCapWriterTail(t *testing.T) {
	w := newCapWriter(16, nil)
	w.Write(nil)
	if w.ring != nil || w.tail() != "" || w.summary() != "" || w.text() != "" {
		t.Fatalf("unwritten writer: ring %v, tail %q, summary %q", w.ring != nil, w.tail(), w.summary())
	}
	w.Write([]byte("first line\n"))
	if got := w.tail(); got != "first line" {
		t.Errorf("tail %q, want %q", got, "first line")
	}
	w.Write([]byte(strings.Repeat("x", tailSize) + "last"))
	if got := w.tail(); len(got) != tailSize || !strings.HasSuffix(got, "last") {
		t.Errorf("tail has %d bytes ending %q, want %d ending \"last\"", len(got), got[max(0, len(got)-4):], tailSize)
	}
	if !w.truncated() || !strings.HasPrefix(w.text(), "first line\nxxxxx") {
		t.Errorf("text %q", w.text())
	}
}
