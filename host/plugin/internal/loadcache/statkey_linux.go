package loadcache

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// StatKey identifies the bytes of the file at path as they are now (see
// Source); "" when it cannot be read.
func StatKey(kind, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%d\x00%d.%d\x00%d.%d", kind, abs, sys.Dev, sys.Ino, sys.Size,
		sys.Mtim.Sec, sys.Mtim.Nsec, sys.Ctim.Sec, sys.Ctim.Nsec)
}
