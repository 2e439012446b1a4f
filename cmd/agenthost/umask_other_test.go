//go:build !unix

package main

// setTestUmask does nothing where there is no umask (see cleanup.Run).
func setTestUmask() {}
