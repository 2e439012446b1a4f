package cassette

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecorderRefusesSymlink: a symbolic link at the cassette's path (say
// one planted in a shared directory) is refused, and the file it points at
// is neither truncated nor written.
func TestRecorderRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.cassette")
	if err := os.Symlink(victim, path); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	r, err := NewRecorder(path)
	if err == nil {
		r.Close()
		t.Fatal("NewRecorder opened a symbolic link")
	}
	if !strings.Contains(err.Error(), path+": it is a symbolic link") || !strings.Contains(err.Error(), "give the path of the file itself") {
		t.Errorf("error %q, want the link named, with the fix", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("victim file now holds %q", b)
	}
}
