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
	want := "ab" + string(ctrlCRune) + "one⏎two    x]0;t⏎three\x1b[Acd"
	if string(got) != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if l := PasteLine("one⏎two"); l != "one\ntwo" {
		t.Errorf("PasteLine %q", l)
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
