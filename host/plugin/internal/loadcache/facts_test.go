package loadcache

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Facts written are read back under the same key and for the same
// module, limit, name and kind only; an entry altered on disk, or one
// others may write, is not read; a Cache without a directory keeps
// nothing.
func TestFactsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := New(dir)
	sum := strings.Repeat("ab", 32)
	key := Key(sum, 16, "echo", "")
	lf := &Facts{Format: Format, Key: key, Module: sum, Pages: 16, Name: "echo",
		Exports: map[string]Export{"_start": {}}, Section: `{"protocol":"agenthost/1"}`}
	c.WriteFacts(lf)
	got := c.ReadFacts(key, sum, 16, "echo", "")
	if got == nil || got.Section != lf.Section || len(got.Exports) != 1 {
		t.Fatalf("read back %+v, want %+v", got, lf)
	}
	for name, read := range map[string]func() *Facts{
		"another module": func() *Facts { return c.ReadFacts(key, strings.Repeat("cd", 32), 16, "echo", "") },
		"another limit":  func() *Facts { return c.ReadFacts(key, sum, 17, "echo", "") },
		"another name":   func() *Facts { return c.ReadFacts(key, sum, 16, "other", "") },
		"another kind":   func() *Facts { return c.ReadFacts(key, sum, 16, "echo", "wasi_cli") },
	} {
		if read() != nil {
			t.Errorf("%s: the facts were read", name)
		}
	}
	path := filepath.Join(dir, Dir, key+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "agenthost/1", "agenthost/2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if c.ReadFacts(key, sum, 16, "echo", "") != nil {
		t.Error("an altered entry was read")
	}
	if runtime.GOOS != "windows" {
		c.WriteFacts(lf)
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		if c.ReadFacts(key, sum, 16, "echo", "") != nil {
			t.Error("an entry others may write was read")
		}
	}
	none := New("")
	none.WriteFacts(lf)
	if none.ReadFacts(key, sum, 16, "echo", "") != nil {
		t.Error("a Cache without a directory kept facts")
	}
}
