//go:build !linux

package main

import "os"

// maxRSS is not measured outside Linux.
func maxRSS(*os.ProcessState) int64 { return 0 }
