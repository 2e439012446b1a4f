package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe: in reuse mode every request line gets one answer line, tool
// errors included; an unreadable request ends the instance with exitMisuse.
func TestServe(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"tool":"read_file","arguments":{"path":"a.txt","offset":2},"call_id":"1"}
{"tool":"read_file","arguments":{"path":"missing.txt"},"call_id":"2"}
{"tool":"write_file","arguments":{"path":"b.txt","content":"x"},"call_id":"3"}
`
	var out, errb bytes.Buffer
	if code := serve("", strings.NewReader(in), &out, &errb, root); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d answer lines, want 3: %q", len(lines), out.String())
	}
	wantErr := []bool{false, true, false}
	for i, l := range lines {
		var res result
		if err := json.Unmarshal([]byte(l), &res); err != nil || res.IsError != wantErr[i] || len(res.Content) != 1 {
			t.Errorf("answer %d: %q (%v)", i+1, l, err)
		}
	}
	if !strings.Contains(lines[0], `2\ttwo`) {
		t.Errorf("answer 1 = %q, want line 2 of a.txt", lines[0])
	}
	if b, err := os.ReadFile(filepath.Join(root, "b.txt")); err != nil || string(b) != "x" {
		t.Errorf("b.txt = %q, %v", b, err)
	}

	out.Reset()
	errb.Reset()
	if code := serve("", strings.NewReader("nope\n"+in), &out, &errb, root); code != exitMisuse || out.Len() != 0 {
		t.Fatalf("garbage request: exit %d, stdout %q; want exit %d and no answer", code, out.String(), exitMisuse)
	}
}
