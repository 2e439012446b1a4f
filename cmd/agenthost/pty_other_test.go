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

// ptyType is the "ptytype" program of the script tests; it needs Linux's
// pseudo-terminals too.
func ptyType() int {
	fmt.Fprintln(os.Stderr, "ptytype: not supported on this system")
	return 2
}
