package fakemodel

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseScript(t *testing.T) {
	replies, err := ParseScript([]byte(`# comment
   # indented comment

{"text": "hi", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
{"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}], "repeat": 2}
{"status": 429, "headers": {"Retry-After": "1"}}
{}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 4 {
		t.Fatalf("got %d replies, want 4", len(replies))
	}
	if r := replies[0]; r.Text != "hi" || r.Usage.CompletionTokens != 4 || r.Line != 4 {
		t.Errorf("reply 1: %+v", r)
	}
	if r := replies[1]; r.ToolCalls[0].Name != "read_file" || r.Repeat != 2 || r.Line != 5 {
		t.Errorf("reply 2: %+v", r)
	}
	if r := replies[2]; r.Status != 429 || r.Headers["Retry-After"] != "1" {
		t.Errorf("reply 3: %+v", r)
	}
}

func TestParseScriptErrors(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"syntax", "{\"text\": \"ok\"}\n{\"text\": ", "line 2: unexpected EOF"},
		{"unknown field", "\n\n{\"txt\": \"hi\"}", `line 3: json: unknown field "txt"`},
		{"two values", `{} {}`, "line 1: more than one JSON value"},
		{"not an object", `"text"`, "line 1: json: cannot unmarshal string"},
		{"status range", `{"status": 200}`, "line 1: status 200 is not an HTTP error status"},
		{"status with text", `{"status": 500, "text": "x"}`, "line 1: status 500 answers with an error"},
		{"body without status", `{"body": {}}`, "line 1: body needs a status"},
		{"raw with text", `{"raw": "data: x", "text": "y"}`, "line 1: raw is sent verbatim"},
		{"cut and hang", `{"cut": true, "hang": true}`, "line 1: cut and hang cannot be combined"},
		{"negative repeat", `{"repeat": -1}`, "line 1: repeat -1 is negative"},
		{"nameless call", `{"tool_calls": [{"arguments": {}}]}`, "line 1: tool_calls[0] has no name"},
		{"chunk_delay unparsable", `{"text": "x", "chunk_delay": "soon"}`, `line 1: chunk_delay "soon": want a duration`},
		{"chunk_delay too long", `{"text": "x", "chunk_delay": "2m"}`, `line 1: chunk_delay "2m"`},
		{"chunk_delay with status", `{"status": 500, "chunk_delay": "1ms"}`, "line 1: chunk_delay paces a stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseScript([]byte(c.script))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	cases := map[string][]string{
		"":                     nil,
		"one":                  {"one"},
		"  lead two three":     {"  lead two ", "three"},
		"a b c d e":            {"a b ", "c d ", "e"},
		"line one\nline two\n": {"line one\n", "line two\n"},
		"héllo wörld ünïcode ": {"héllo wörld ", "ünïcode "},
	}
	for in, want := range cases {
		got := splitWords(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitThirds(t *testing.T) {
	for _, in := range []string{"", "a", "ab", `{"p":"é"}`, "ééééé", `{"path":"some/longer/path.txt"}`} {
		got := splitThirds(in)
		if strings.Join(got, "") != in || len(got) > 3 {
			t.Errorf("splitThirds(%q) = %q", in, got)
		}
		for _, p := range got {
			if p == "" || !utf8.ValidString(p) {
				t.Errorf("splitThirds(%q): bad piece %q", in, p)
			}
		}
	}
}
