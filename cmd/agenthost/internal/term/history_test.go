package term

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	h, err := OpenHistory(func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] })
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
