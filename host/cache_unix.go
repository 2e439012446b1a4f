//go:build unix

package host

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses path when another user owns it or group or others
// may write it. A directory must be a directory when dir is true. Symbolic
// links are followed: what counts is where the files are written.
func checkPrivate(path string, dir bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("compilation cache: %w", err)
	}
	if dir && !st.IsDir() {
		return fmt.Errorf("compilation cache %s is not a directory: set AGENTHOST_CACHE_DIR to a private directory", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if uid := os.Getuid(); int(sys.Uid) != uid {
			return unsafeCache(path, fmt.Sprintf("is owned by uid %d, not by you (uid %d)", sys.Uid, uid), "chown it to yourself")
		}
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		who := "group and others"
		switch {
		case perm&0o020 == 0:
			who = "others"
		case perm&0o002 == 0:
			who = "its group"
		}
		return unsafeCache(path, fmt.Sprintf("is writable by %s (mode %04o)", who, perm), "chmod go-w it")
	}
	return nil
}
