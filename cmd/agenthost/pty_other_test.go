//go:build !linux

package main

import (
	"fmt"
	"os"
)

// ptyRun is the "ptyrun" program of the script tests; it needs Linux's
// pseudo-terminals (scripts using it skip elsewhere).
func ptyRun() int {
	fmt.Fprintln(os.Stderr, "ptyrun: not supported on this system")
	return 2
}
