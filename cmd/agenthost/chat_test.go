package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agenthost/agenthost/host"
)

// A bracketed paste reaches the line editor as one line, whatever the
// reads cut it into: its line breaks as ⏎ (made line breaks again by
// pasteLine), tabs as spaces, other controls and the markers dropped;
// Ctrl-C typed outside it is the stand-in rune, inside it nothing.
func TestChatKeysPaste(t *testing.T) {
	in := "ab\x03\x1b[200~one\r\ntwo\tx\x1b]0;t\x07\x03\nthree\x1b[201~\x1b[Acd"
	k := &chatKeys{r: iotest.OneByteReader(strings.NewReader(in))}
	got, err := io.ReadAll(k)
	if err != nil {
		t.Fatal(err)
	}
	want := "ab" + string(ctrlCRune) + "one⏎two    x]0;t⏎three\x1b[Acd"
	if string(got) != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if l := pasteLine("one⏎two"); l != "one\ntwo" {
		t.Errorf("pasteLine %q", l)
	}
}

// The history file is bounded: at start the last MiB is read and, past
// historyMax lines or a cut, the file is rewritten with the newest
// historyMax; Add appends and skips a repeat of the newest line.
func TestChatHistoryBounded(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "agenthost")
	os.MkdirAll(dir, 0o700)
	var b bytes.Buffer
	for i := range 3000 {
		j, _ := json.Marshal(fmt.Sprintf("line %d %s", i, strings.Repeat("x", 500)))
		b.Write(append(j, '\n'))
	}
	if b.Len() <= historyMaxBytes {
		t.Fatalf("test file of %d bytes is not over the bound", b.Len())
	}
	path := filepath.Join(dir, historyFile)
	os.WriteFile(path, b.Bytes(), 0o644)
	e := &env{getenv: func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }}
	h, err := openHistory(e)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Len() > historyMax || h.Len() < 1000 {
		t.Errorf("%d lines loaded", h.Len())
	}
	if !strings.HasPrefix(h.At(0), "line 2999 ") {
		t.Errorf("newest %q", h.At(0)[:12])
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > historyMaxBytes || fi.Mode().Perm() != 0o600 {
		t.Errorf("file after start: %v, %v", fi, err)
	}
	h.Add("new line")
	h.Add("new line")
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\"new line\"\n"); n != 1 || !strings.HasSuffix(string(data), "\"new line\"\n") {
		t.Errorf("appended %d times", n)
	}
	if h.At(0) != "new line" || h.At(1) == "new line" {
		t.Errorf("history order: %q, %q", h.At(0), h.At(1)[:10])
	}
}

// The key argument is the first required string property, on one line,
// cut and escaped; a tool without one shows none.
func TestChatKeyArg(t *testing.T) {
	c := &chat{keyArgs: chatKeyArgs([]host.Tool{
		{Name: "read_file", InputSchema: []byte(`{"type":"object","properties":{"limit":{"type":"integer"},"path":{"type":"string"}},"required":["limit","path"]}`)},
		{Name: "count", InputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
	})}
	for _, tc := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"notes.md","limit":3}`, "notes.md"},
		{"read_file", `{"path":"a\nb\u001b[2Jc"}`, `a b\x1b[2Jc`},
		{"read_file", `{"path":"` + strings.Repeat("d", 60) + `"}`, strings.Repeat("d", keyArgMax-1) + "…"},
		{"read_file", `{"path":3}`, ""},
		{"read_file", `not json`, ""},
		{"count", `{"n":3}`, ""},
		{"other", `{"path":"x"}`, ""},
	} {
		if got := c.keyArg(tc.tool, tc.args); got != tc.want {
			t.Errorf("keyArg(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

// renderMarkdownTerm: structure without colour, SGR with it, and the
// model's control sequences escaped either way.
func TestRenderMarkdownTerm(t *testing.T) {
	src := "# T\x1b[2J\n\n1. a *b*\n2. c\n\n> q\n\n| x | yy |\n|---|---|\n| 1 | 2 |\n\n[l](http://e.x) ![i](http://i.x)\n"
	want := "# T\\x1b[2J\n\n1. a *b*\n2. c\n\n│ q\n\nx │ yy\n──┼───\n1 │ 2\n\nl <http://e.x> [image: i] <http://i.x>\n"
	if got := renderMarkdownTerm(src, false); got != want {
		t.Errorf("plain:\n%q\nwant:\n%q", got, want)
	}
	col := renderMarkdownTerm("## H\n\n**b** _i_ ~~s~~ `c`\n", true)
	if col != "\x1b[1mH\x1b[22m\n\n\x1b[1mb\x1b[22m \x1b[3mi\x1b[23m \x1b[9ms\x1b[29m \x1b[36mc\x1b[39m\n" {
		t.Errorf("colour: %q", col)
	}
	var m mdLines
	var got []string
	for _, l := range []string{"- x", "  - nested", "```", "# not a heading", "```", "**b**"} {
		got = append(got, m.line(l, false))
	}
	if strings.Join(got, "|") != "• x|  • nested|```|    # not a heading|```|**b**" {
		t.Errorf("lines: %q", got)
	}
}
