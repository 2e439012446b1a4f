package config

import (
	"embed"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/internal/defaults"
)

//go:embed starter
var starterFS embed.FS

// StarterWorkspace is the folder the starter config mounts read-write, the
// only one its tools see; "agenthost init" makes it beside agents.hcl. The
// project's own files (agents.hcl, prompts/, data_dir) stay out of their
// reach.
const StarterWorkspace = "workspace"

// Starter returns the files "agenthost init" writes: a commented
// agents.hcl, the prompts it reads and a first scenario test of it
// (testdata/agenthost/build_writes_hello.txtar), by slash-separated path relative to
// the directory of agents.hcl ("agents.hcl", "prompts/build.md", ...).
// They load without diagnostics.
func Starter() map[string][]byte {
	out := map[string][]byte{}
	err := fs.WalkDir(starterFS, "starter", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := starterFS.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, "starter/")] = b
		return nil
	})
	if err != nil {
		panic("config: embedded starter files: " + err.Error()) // a build bug
	}
	return out
}

// ExistError is WriteStarter's refusal: Names are in the way (files of
// the starter, or a StarterWorkspace that is not a directory), and
// nothing was written.
type ExistError struct{ Names []string }

func (e *ExistError) Error() string {
	return "would overwrite " + strings.Join(e.Names, ", ") + "; nothing written (move them away or edit them by hand)"
}

// WriteStarter writes the starter (Starter) in the current directory, as
// `agenthost init` does, overwriting nothing: with a file of the starter
// there already, or a StarterWorkspace that is not a directory, it writes
// nothing and returns an *ExistError. It makes StarterWorkspace (one
// there is kept) and the default data_dir, private as sessions need it,
// with a .gitignore that keeps the sessions, which hold every prompt and
// tool result, out of version control (one there is kept). done is told
// each thing done, as a line for the user ("wrote agents.hcl").
func WriteStarter(done func(string)) error {
	files := Starter()
	names := slices.Sorted(maps.Keys(files))
	var exist []string
	for _, n := range names {
		if _, err := os.Lstat(n); !errors.Is(err, os.ErrNotExist) {
			exist = append(exist, n)
		}
	}
	st, err := os.Lstat(StarterWorkspace)
	haveWorkspace := err == nil && st.IsDir()
	if err == nil && !haveWorkspace {
		exist = append(exist, StarterWorkspace)
	}
	if len(exist) > 0 {
		return &ExistError{Names: exist}
	}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Dir(n), 0o755); err != nil {
			return err
		}
		if err := writeNew(n, files[n], 0o644); err != nil {
			return err
		}
		done("wrote " + n)
	}
	if haveWorkspace {
		done("kept " + StarterWorkspace + "/ (the folder the agents work in)")
	} else if err := os.Mkdir(StarterWorkspace, 0o755); err != nil {
		return err
	} else {
		done("made " + StarterWorkspace + "/ (the folder the agents work in)")
	}
	return writeDataDir(done)
}

// writeDataDir makes the starter's data_dir with its .gitignore
// (WriteStarter).
func writeDataDir(done func(string)) error {
	dir := defaults.DataDir
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	ignore := filepath.Join(dir, ".gitignore")
	err := writeNew(ignore, []byte("# agenthost's data (sessions, recordings): not for version control.\n*\n"), 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err == nil {
		done("wrote " + ignore + " (the sessions stay out of git)")
	}
	return err
}

// writeNew writes data to the file name, which it makes: one that exists
// is left alone (os.ErrExist).
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
