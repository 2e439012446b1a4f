//go:build !linux

package main

// trimStartPages is Linux only (see trim_linux.go).
func trimStartPages() {}
