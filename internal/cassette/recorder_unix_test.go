//go:build unix

package cassette

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecorderPrivate: a cassette holds prompts, answers and what tools
// read: it is 0600, in directories made 0700, also when it replaces a file
// that others could read or write (past any umask).
func TestRecorderPrivate(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "deep", "dir", "run.cassette")
	r, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %04o", p, st.Mode(), err, want)
		}
	}

	old := filepath.Join(base, "old.cassette")
	if err := os.WriteFile(old, []byte("old entries\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o666); err != nil {
		t.Fatal(err)
	}
	r, err = NewRecorder(old)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	st, err := os.Stat(old)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != 0 {
		t.Errorf("re-recorded cassette: mode %v, size %d, %v; want 0600 and empty", st.Mode(), st.Size(), err)
	}
}
