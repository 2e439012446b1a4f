//go:build unix

package mcpuse

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has this pid (it exited and was
// reaped).
func processGone(pid int) (gone, known bool) {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH), true
}
