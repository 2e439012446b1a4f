//go:build !wasip1

package main

// mountRoots is /workspace outside WASI (native builds are for tests, which
// pass their own directories to run).
func mountRoots() []string { return []string{workspaceRoot} }
