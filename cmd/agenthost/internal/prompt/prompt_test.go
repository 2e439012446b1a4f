package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPromptStdinCap reads a prompt of exactly the cap whole and refuses
// one byte more with a usage error, never cutting it.
func TestReadPromptStdinCap(t *testing.T) {
	for _, tc := range []struct {
		n     int
		usage bool
	}{{Max, false}, {Max + 1, true}} {
		p, err := Build([]string{"-"}, "", strings.NewReader(strings.Repeat("a", tc.n)), false)
		var ue *UsageError
		if got := errors.As(err, &ue); got != tc.usage {
			t.Fatalf("%d bytes: usage error %v, want %v (%v)", tc.n, got, tc.usage, err)
		}
		if err == nil && len(p) != tc.n {
			t.Errorf("%d bytes: prompt of %d bytes, want it whole", tc.n, len(p))
		}
		if err != nil && (p != "" || !strings.Contains(err.Error(), "more than 16 MiB")) {
			t.Errorf("%d bytes: prompt %d bytes, error %q; want none and the limit named", tc.n, len(p), err)
		}
	}
}

// TestBuildOrder joins the arguments, -f's file and piped stdin, each
// trimmed, after a blank line; "@@" is a literal "@", "@FILE" a file.
func TestBuildOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "task.md")
	if err := os.WriteFile(file, []byte("  from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		file  string
		stdin string
		tty   bool
		want  string
	}{
		{[]string{"a", "b"}, file, "\npiped\n", false, "a b\n\nfrom the file\n\npiped"},
		{[]string{"a"}, "", "ignored", true, "a"},
		{[]string{"@@x"}, "", "", true, "@x"},
		{[]string{"@" + file}, "", "", true, "from the file"},
		{[]string{"-"}, "", " s ", false, "s"},
	} {
		got, err := Build(tc.args, tc.file, strings.NewReader(tc.stdin), tc.tty)
		if err != nil || got != tc.want {
			t.Errorf("Build(%q, %q, %q, %v) = %q, %v; want %q", tc.args, tc.file, tc.stdin, tc.tty, got, err, tc.want)
		}
	}
	for _, args := range [][]string{nil, {"-"}, {"@" + filepath.Join(dir, "none")}} {
		_, err := Build(args, "", strings.NewReader(""), false)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("Build(%q) = %v, want a usage error", args, err)
		}
	}
}
