//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is the peak resident memory of an ended process, in bytes.
func maxRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	// ru_maxrss is in KiB on Linux, in bytes on macOS.
	unit := map[string]int64{"linux": 1 << 10, "darwin": 1}[runtime.GOOS]
	if !ok || unit == 0 {
		return 0, false
	}
	return int64(ru.Maxrss) * unit, true
}
