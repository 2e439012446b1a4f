package callview

import (
	"regexp"
	"strings"
	"testing"
)

// keyLines are the lines of a view at the key column.
func keyLines(view string) []string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			out = append(out, l)
		}
	}
	return out
}

// TestForgedLine: a value holding a newline and a line that looks like
// another key's is shown behind the gutter; the only line at the key
// column that starts with path: is the real path's.
func TestForgedLine(t *testing.T) {
	args := `{"path":"/workspace/run.sh","content":"rm -rf ~\n  path: /workspace/notes.md\npath: /x"}`
	got := Arguments(args, 80)
	var paths []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "path:") {
			paths = append(paths, l)
		}
	}
	if len(paths) != 1 || paths[0] != "  path: /workspace/run.sh" {
		t.Errorf("lines starting with path: %q, want only the real one; view:\n%s", paths, got)
	}
	for _, want := range []string{"  content: 3 lines, 45 B\n", "    │ rm -rf ~\n", "    │   path: /workspace/notes.md\n", "    │ path: /x\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
}

// TestEscapes: control characters and terminal escapes in keys and values
// are shown escaped; none reaches the view raw.
func TestEscapes(t *testing.T) {
	args := `{"a\nb":"x","title":"\u001b]0;pwned\u0007","clear":"\u001b[2J\rover","c1":"\u009b31m","multi":"one\u001b[1A\ntwo\r\n"}`
	got := Arguments(args, 80)
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
		t.Errorf("view holds a control character: %q", got)
	}
	for _, want := range []string{`  a\nb: x`, `  title: \x1b]0;pwned\x07`, `  clear: \x1b[2J\rover`, `  c1: \u009b31m`, `    │ one\x1b[1A`, `    │ two\r`} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
}

// TestFold: a long value is folded after MaxValueLines screen lines with
// its size; a long line is cut to the width behind the gutter, so the
// terminal does not wrap it to the key column.
func TestFold(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		b.WriteString(strings.Repeat("x", 30) + "\n")
		_ = i
	}
	args := `{"content":"` + strings.ReplaceAll(b.String(), "\n", `\n`) + `","line":"` + strings.Repeat("y", 70) + "   path: /fake" + `"}`
	got := Arguments(args, 80)
	if !strings.Contains(got, "  content: 400 lines, 12.1 KiB\n") || !strings.Contains(got, "    … (12.1 KiB in all; 24 of 400 lines shown)\n") {
		t.Errorf("long value not folded with its size:\n%s", got)
	}
	if n := strings.Count(got, "    │ "+strings.Repeat("x", 30)+"\n"); n != MaxValueLines {
		t.Errorf("%d lines of the value shown, want %d", n, MaxValueLines)
	}
	for _, l := range strings.Split(got, "\n") {
		if cells(l) > 79 {
			t.Errorf("line of %d cells, wider than the width: %q", cells(l), l)
		}
	}
	if !regexp.MustCompile(`(?m)^    ┆ .*path: /fake$`).MatchString(got) {
		t.Errorf("the long line is not cut behind the gutter:\n%s", got)
	}
	if k := keyLines(got); len(k) != 2 {
		t.Errorf("key lines %q, want content and line", k)
	}
}

// TestChangeDiff: a change is shown as a diff with - and + lines in place
// of the arguments it replaces; a new file as its content.
func TestChangeDiff(t *testing.T) {
	args := `{"path":"run.sh","old_string":"echo hi","new_string":"rm -rf ~"}`
	ch := &Change{Exists: true, Old: []byte("#!/bin/sh\necho hi\nexit 0\n"), New: []byte("#!/bin/sh\nrm -rf ~\nexit 0\n"), Replaces: []string{"old_string", "new_string"}}
	got := Call(args, 80, ch)
	for _, want := range []string{"  path: run.sh\n", "  diff: the file now (3 lines, 25 B) and after the call (3 lines, 26 B):\n",
		"    │ @@ -1,3 +1,3 @@\n", "    │  #!/bin/sh\n", "    │ -echo hi\n", "    │ +rm -rf ~\n", "    │  exit 0\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old_string") || strings.Contains(got, "new_string") {
		t.Errorf("the replaced arguments are shown too:\n%s", got)
	}
	got = Call(`{"path":"new.txt","content":"a\nb\n"}`, 80, &Change{New: []byte("a\nb\n"), Replaces: []string{"content"}})
	if want := "  diff: a new file, 2 lines, 4 B:\n    │ a\n    │ b\n"; !strings.Contains(got, want) {
		t.Errorf("new file: view\n%s\nlacks\n%s", got, want)
	}
	big := &Change{Exists: true, Old: make([]byte, MaxDiffBytes+1), New: []byte("x"), Replaces: []string{"content"}}
	if got := Call(`{"path":"big","content":"x"}`, 80, big); strings.Contains(got, "diff:") || !strings.Contains(got, "  content: x\n") {
		t.Errorf("a file over MaxDiffBytes is diffed, or its arguments not shown:\n%s", got)
	}
}

// TestWideKeyAndRunes: a long key is cut; wide characters count two cells.
func TestWideKeyAndRunes(t *testing.T) {
	got := Arguments(`{"`+strings.Repeat("k", 200)+`":"v","w":"`+strings.Repeat("界", 60)+`"}`, 80)
	for _, l := range strings.Split(got, "\n") {
		if cells(l) > 79 {
			t.Errorf("line of %d cells: %q", cells(l), l)
		}
	}
	if !strings.Contains(got, "  w: 1 line, 180 B\n") {
		t.Errorf("a line of wide characters too long for the width is not shown below its key:\n%s", got)
	}
}
