package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/internal/defaults"
)

// TestWriteStarter writes the starter files, the workspace and a private
// data_dir with its .gitignore; a second time it refuses, naming what is
// in the way, and writes nothing.
func TestWriteStarter(t *testing.T) {
	t.Chdir(t.TempDir())
	var lines []string
	if err := WriteStarter(func(l string) { lines = append(lines, l) }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wrote agents.hcl", "made workspace/ (the folder the agents work in)", "wrote " + filepath.Join(defaults.DataDir, ".gitignore") + " (the sessions stay out of git)"} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in %q", want, lines)
		}
	}
	if st, err := os.Stat(defaults.DataDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data_dir: %v %v, want private", st, err)
	}
	if err := os.RemoveAll(filepath.Join("prompts")); err != nil {
		t.Fatal(err)
	}
	err := WriteStarter(func(l string) { t.Errorf("wrote %q over the first starter", l) })
	var exist *ExistError
	if !errors.As(err, &exist) || !slices.Contains(exist.Names, "agents.hcl") || slices.Contains(exist.Names, StarterWorkspace) {
		t.Fatalf("second time: %v, want an ExistError naming agents.hcl and not the workspace directory", err)
	}
	if _, err := os.Stat("prompts"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("prompts/ written again after a refusal: %v", err)
	}
}
