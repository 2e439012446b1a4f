//go:build unix

package private

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Check returns why fi is not private, or nil: when another user owns it,
// or group or others may write it.
func Check(fi fs.FileInfo) *Problem {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Getuid(); int(sys.Uid) != uid {
			return &Problem{What: fmt.Sprintf("is owned by uid %d, not by you (uid %d)", sys.Uid, uid), Fix: "chown it to yourself"}
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		who := "group and others"
		switch {
		case perm&0o020 == 0:
			who = "others"
		case perm&0o002 == 0:
			who = "its group"
		}
		return &Problem{What: fmt.Sprintf("is writable by %s (mode %04o)", who, perm), Fix: "chmod go-w it"}
	}
	return nil
}
