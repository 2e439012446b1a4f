//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package rootfs

import (
	"errors"
	"os"
)

// setAppend is not supported here: os.File cannot change O_APPEND in
// place, and reopening the file by its path could race with a rename.
func setAppend(*os.File, bool) error { return errors.ErrUnsupported }

// pwrite is os.File.WriteAt, which refuses a file opened with O_APPEND.
func pwrite(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }

// renameAt is not supported here: a directory is never replaced.
func renameAt(*os.Root, string, *os.Root, string) error { return errors.ErrUnsupported }
