//go:build unix

package main

import "syscall"

// setTestUmask sets the test process's umask to 022 (see cleanup.Run).
func setTestUmask() { syscall.Umask(0o022) }
