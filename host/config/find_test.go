package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFind finds agents.hcl here, else in the nearest parent that has one
// (a directory of that name does not count), else names it missing here.
func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(filepath.Join(root, "a", FileName), 0o755); err != nil { // a directory, passed over
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if got := Find(); filepath.Dir(got) == filepath.Join(root, "a") {
		t.Fatalf("a directory named %s was taken for the config: %q", FileName, got)
	}
	if err := os.WriteFile(filepath.Join(root, FileName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(root, FileName))
	if got, _ := filepath.EvalSymlinks(Find()); got != want {
		t.Errorf("from %s: %q, want %q", deep, got, want)
	}
	t.Chdir(root)
	if got := Find(); got != FileName {
		t.Errorf("in %s: %q, want %q", root, got, FileName)
	}
}
