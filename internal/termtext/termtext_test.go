package termtext

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Hello, wörld — ok.\n\tindented", "Hello, wörld — ok.\n\tindented"},
		{"osc title", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"lone cr", "progress 10%\rdone", `progress 10%\rdone`},
		{"crlf kept", "line one\r\nline two\r\n", "line one\r\nline two\r\n"},
		{"trailing cr", "abc\r", `abc\r`},
		{"del and nul", "a\x7fb\x00c", `a\x7fb\x00c`},
		{"c1 csi", "a\u009b2Jb\u0085", `a\u009b2Jb\u0085`},
		{"invalid utf-8", "a\x9b2J\xffb", `a\x9b2J\xffb`},
		{"backspace", "abc\b\b\bXYZ", `abc\x08\x08\x08XYZ`},
		{"nbsp kept", "a\u00a0b", "a\u00a0b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEscapeSafeDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("plain text, ünïcode ok\n", 10)
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Errorf("Escape of safe text allocated %v times", n)
	}
}

// TestWriterSplits: a stream split anywhere (inside an escape sequence,
// inside a UTF-8 sequence, between \r and \n) comes out exactly as the
// whole text escaped at once.
func TestWriterSplits(t *testing.T) {
	texts := []string{
		"title: \x1b]0;pwned\x07 then \x1b[2J clear",
		"c1: \u009b31m red \u009c and é and 日本 and 🙂",
		"crlf\r\nand lone\rcr and end\r",
		"bad \xc2 byte then \xe6\x97 cut",
		"ends inside \xf0\x9f\x99",
	}
	for _, text := range texts {
		want := Escape(text)
		// every way of cutting the text in two or three pieces
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var out bytes.Buffer
				w := NewWriter(&out)
				for _, piece := range []string{text[:i], text[i:j], text[j:]} {
					if n, err := w.WriteString(piece); err != nil || n != len(piece) {
						t.Fatalf("WriteString = %d, %v", n, err)
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if out.String() != want {
					t.Fatalf("pieces %q %q %q: got %q, want %q", text[:i], text[i:j], text[j:], out.String(), want)
				}
				if w.Pending() {
					t.Fatalf("bytes held after Flush")
				}
			}
		}
	}
}

// TestWriterHoldsOnlyWhatItMust: complete text is written at once; only a
// trailing \r or an incomplete UTF-8 sequence waits.
func TestWriterHoldsOnlyWhatItMust(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.WriteString("a\x1b")
	if got := out.String(); got != `a\x1b` {
		t.Errorf("after a\\x1b: %q", got)
	}
	w.WriteString("b\r")
	if got := out.String(); got != `a\x1bb` || !w.Pending() {
		t.Errorf("after b\\r: %q (pending %v)", got, w.Pending())
	}
	w.WriteString("\n\xc2")
	if got := out.String(); got != "a\\x1bb\r\n" || !w.Pending() {
		t.Errorf("after \\n\\xc2: %q", got)
	}
	w.WriteString("\x9b")
	if got := out.String(); got != "a\\x1bb\r\n\\u009b" || w.Pending() {
		t.Errorf("after \\x9b: %q", got)
	}
}

func BenchmarkWriter(b *testing.B) {
	chunk := []byte("Here is some streamed model text, about a sentence long. ")
	w := NewWriter(&bytes.Buffer{})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		w.w.(*bytes.Buffer).Reset()
		w.Write(chunk)
	}
}

// TestLine: text for one line keeps none of the characters that start
// another (newline, carriage return, even before a newline) and shows
// tabs, besides what Escape does.
func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ünïcode", "plain ünïcode"},
		{"a\nb", `a\nb`},
		{"a\r\nb", `a\r\nb`},
		{"tab\there", `tab\there`},
		{"esc\x1b[2J\n", `esc\x1b[2J\n`},
		{"end\r", `end\r`},
	} {
		got := Line(tc.in)
		if got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\n\r\t\x1b") {
			t.Errorf("Line(%q) = %q keeps a control character", tc.in, got)
		}
	}
}
