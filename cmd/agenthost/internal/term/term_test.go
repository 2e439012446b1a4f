package term

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// A bracketed paste reaches the line editor as one line, whatever the
// reads cut it into: its line breaks as ⏎ (made line breaks again by
// PasteLine), tabs as spaces, other controls and the markers dropped;
// Ctrl-C typed outside it is the stand-in rune, inside it nothing.
func TestKeysPaste(t *testing.T) {
	in := "ab\x03\x1b[200~one\r\ntwo\tx\x1b]0;t\x07\x03\nthree\x1b[201~\x1b[Acd"
	k := NewKeys(iotest.OneByteReader(strings.NewReader(in)))
	got, err := io.ReadAll(k)
	if err != nil {
		t.Fatal(err)
	}
	want := "ab" + string(ctrlCRune) + string(pasteRune) + "\x1b[Acd"
	if string(got) != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	line, pos, ok := k.Complete("ab", 1, pasteRune)
	if want := "aone⏎two    x]0;t⏎threeb"; !ok || line != want || pos != len(want)-1 {
		t.Errorf("Complete(paste) = %q, %d, %v; want %q", line, pos, ok, want)
	}
	if len(k.pastes) != 0 {
		t.Errorf("paste kept after Complete: %q", k.pastes)
	}
	if l := PasteLine("one⏎two"); l != "one\ntwo" {
		t.Errorf("PasteLine %q", l)
	}
}

// A paste is inserted whole however long, up to MaxLine runes on the
// line; one that would make the line longer is refused with a notice.
func TestKeysPasteBound(t *testing.T) {
	fits := strings.Repeat("é", MaxLine-2)
	k := NewKeys(strings.NewReader("\x1b[200~" + fits + "\x1b[201~\x1b[200~xyz\x1b[201~"))
	var notices []string
	k.Notice = func(s string) { notices = append(notices, s) }
	if _, err := io.ReadAll(k); err != nil {
		t.Fatal(err)
	}
	line, _, _ := k.Complete("ab", 2, pasteRune)
	if line != "ab"+fits || len(notices) != 0 {
		t.Fatalf("paste that fits: %d bytes, notices %q", len(line), notices)
	}
	line2, pos, ok := k.Complete(line, len(line), pasteRune)
	if !ok || line2 != line || pos != len(line) {
		t.Errorf("paste over the bound changed the line")
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "paste of 3 characters was not added") {
		t.Errorf("notices %q", notices)
	}
}

// TestMarkdown: structure without colour, SGR with it, and the
// model's control sequences escaped either way.
func TestMarkdown(t *testing.T) {
	src := "# T\x1b[2J\n\n1. a *b*\n2. c\n\n> q\n\n| x | yy |\n|---|---|\n| 1 | 2 |\n\n[l](http://e.x) ![i](http://i.x)\n"
	want := "# T\\x1b[2J\n\n1. a *b*\n2. c\n\n│ q\n\nx │ yy\n──┼───\n1 │ 2\n\nl <http://e.x> [image: i] <http://i.x>\n"
	if got := Markdown(src, false); got != want {
		t.Errorf("plain:\n%q\nwant:\n%q", got, want)
	}
	col := Markdown("## H\n\n**b** _i_ ~~s~~ `c`\n", true)
	if col != "\x1b[1mH\x1b[22m\n\n\x1b[1mb\x1b[22m \x1b[3mi\x1b[23m \x1b[9ms\x1b[29m \x1b[36mc\x1b[39m\n" {
		t.Errorf("colour: %q", col)
	}
	var m MarkdownLines
	var got []string
	for _, l := range []string{"- x", "  - nested", "```", "# not a heading", "```", "**b**"} {
		got = append(got, m.Line(l, false))
	}
	if strings.Join(got, "|") != "• x|  • nested|```|    # not a heading|```|**b**" {
		t.Errorf("lines: %q", got)
	}
}
