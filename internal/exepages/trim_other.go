//go:build !linux

package exepages

// Trim is Linux only (see trim_linux.go).
func Trim() {}
