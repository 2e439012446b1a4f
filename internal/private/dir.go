package private

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenDir opens the directory dir through an os.Root, first creating it
// (0700, parents included) when create and it is missing, and refuses it
// when it is not private (Check): refuse words that refusal, since the
// caller knows what the directory holds and what else the user may do.
// The check is made through the opened handle, so the directory checked
// is the one used. The caller closes the root.
func OpenDir(dir string, create bool, refuse func(*Problem) error) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	st, err := r.Stat(".")
	if err == nil {
		if p := Check(st); p != nil {
			err = refuse(p)
		}
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Tighten takes group's and others' permissions away from an entry that
// has any: fi is its stat, chmod changes it, path names it in the error.
func Tighten(path string, fi fs.FileInfo, chmod func(fs.FileMode) error) error {
	perm := fi.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	if err := chmod(perm & 0o700); err != nil {
		return fmt.Errorf("make %s private: %w", path, err)
	}
	return nil
}
