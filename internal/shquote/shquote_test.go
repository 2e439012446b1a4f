package shquote

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

var hostile = []string{
	"c1",
	"--always",
	"-",
	"c1;touch${IFS}/tmp/x;#",
	"a b",
	"it's",
	"''",
	`"$(touch x)"`,
	"`touch x`",
	"$HOME",
	"x\ny",
	"tab\there",
	"glob*?[a]",
	"~root",
	"a|b&c>d<e",
	"!event",
	"back\\slash",
	"ünïcode",
	"",
	"#comment",
	"{a,b}",
}

// TestQuoteRoundTrip: each word, printed by Command and run by /bin/sh,
// reaches the command as exactly one argument after "--", the same bytes,
// and runs nothing (no file is created in the directory).
func TestQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	for _, s := range hostile {
		line := Command([]string{"printf", "%s\\n"}, s)
		// The printed line is what a person pastes: run it as a script.
		cmd := exec.Command(sh, "-c", line)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: sh -c %q: %v", s, line, err)
		}
		want := "--\n" + s + "\n"
		if string(out) != want {
			t.Errorf("%q: printed %q, the shell passed %q, want %q", s, line, out, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("pasting the printed commands made files: %v", ents)
	}
}

// TestQuoteBare: words of safe characters stay as they are.
func TestQuoteBare(t *testing.T) {
	for _, s := range []string{"agenthost", "runs", "approve", "--", "20261207-161907-3a0338", "call_1_1", "localhost:7233", "a/b.c", "--always"} {
		if got := Quote(s); got != s {
			t.Errorf("Quote(%q) = %q, want it bare", s, got)
		}
	}
	if got := Command([]string{"agenthost", "runs", "approve"}, "r1", "c1;touch${IFS}/tmp/x;#"); got != `agenthost runs approve -- r1 'c1;touch${IFS}/tmp/x;#'` {
		t.Errorf("Command = %q", got)
	}
	if strings.Contains(Quote("it's"), "it's") {
		t.Errorf("Quote(it's) = %q keeps a bare quote", Quote("it's"))
	}
}
