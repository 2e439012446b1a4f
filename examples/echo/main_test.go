package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestEcho(t *testing.T) {
	for _, tc := range []struct {
		name, tool, stdin, want string
		code                    int
	}{
		{"echoes", "echo", `{"tool":"echo","arguments":{"text":"hi there"},"call_id":"1"}`, "hi there", 0},
		{"missing text", "echo", `{"tool":"echo","arguments":{},"call_id":"1"}`, "text is required", 1},
		{"unknown tool", "shout", `{"tool":"shout","arguments":{"text":"x"}}`, `unknown tool "shout"`, 1},
		{"garbage", "echo", `nope`, "invalid request", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run("call", tc.tool, strings.NewReader(tc.stdin), &out, &errb)
			var res struct {
				Content []struct{ Type, Text string } `json:"content"`
				IsError bool                          `json:"is_error"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			if code != tc.code || res.IsError != (tc.code == 1) || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tc.want) {
				t.Fatalf("exit %d, result %+v; want exit %d and %q", code, res, tc.code, tc.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run("describe", "", strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct{ Protocol, Name string }
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Protocol != "agenthost/1" || m.Name != "echo" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	var errb2 bytes.Buffer
	if code := run("", "", strings.NewReader(""), &out, &errb2); code != 2 || !strings.Contains(errb2.String(), "AGENTHOST_MODE") {
		t.Fatalf("no mode: exit %d, stderr %q", code, errb2.String())
	}
}

// TestServe: in reuse mode each request line gets one answer line, tool
// errors included, until stdin ends.
func TestServe(t *testing.T) {
	in := `{"tool":"echo","arguments":{"text":"one"},"call_id":"1"}
{"tool":"echo","arguments":{},"call_id":"2"}
{"tool":"echo","arguments":{"text":"three\nlines"},"call_id":"3"}
nope
{"tool":"shout","arguments":{"text":"x"},"call_id":"5"}
`
	var out, errb bytes.Buffer
	if code := serve(strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []struct {
		text    string
		isError bool
	}{{"one", false}, {"text is required", true}, {"three\nlines", false}, {"invalid request: invalid character 'o' in literal null (expecting 'u')", true}, {`unknown tool "shout"`, true}}
	if len(lines) != len(want) {
		t.Fatalf("%d answer lines, want %d: %q", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var res struct {
			Content []struct{ Type, Text string } `json:"content"`
			IsError bool                          `json:"is_error"`
		}
		if err := json.Unmarshal([]byte(l), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != want[i].text || res.IsError != want[i].isError {
			t.Errorf("answer %d: %q (%v), want %+v", i+1, l, err, want[i])
		}
	}
}
