package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadPromptStdinCap reads a prompt of exactly the cap whole and refuses
// one byte more with a usage error, never cutting it.
func TestReadPromptStdinCap(t *testing.T) {
	for _, tc := range []struct {
		n    int
		code int
	}{{maxStdinPrompt, exitOK}, {maxStdinPrompt + 1, exitUsage}} {
		var stderr bytes.Buffer
		e := &env{stdin: strings.NewReader(strings.Repeat("a", tc.n)), stderr: &stderr}
		p, code := readPrompt([]string{"-"}, "", e)
		if code != tc.code {
			t.Fatalf("%d bytes: exit %d, want %d (%s)", tc.n, code, tc.code, stderr.String())
		}
		if code == exitOK && len(p) != tc.n {
			t.Errorf("%d bytes: prompt of %d bytes, want it whole", tc.n, len(p))
		}
		if code != exitOK && (p != "" || !strings.Contains(stderr.String(), "more than 16 MiB")) {
			t.Errorf("%d bytes: prompt %d bytes, stderr %q; want none and the limit named", tc.n, len(p), stderr.String())
		}
	}
}
