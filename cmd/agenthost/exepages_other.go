//go:build !linux

package main

// trimExecutable is Linux only (exepages_linux.go).
func trimExecutable() {}
