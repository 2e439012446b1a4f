//go:build unix

package loadcache

import (
	"os"
	"syscall"
)

// private reports whether a cache file or directory is the user's own and
// writable by nobody else.
func private(st os.FileInfo) bool {
	if st.Mode().Perm()&0o022 != 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}
