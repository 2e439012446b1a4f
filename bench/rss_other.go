//go:build !linux

package main

import (
	"fmt"
	"os"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

// maxRSS is not measured outside Linux.
func maxRSS(*os.ProcessState) int64 { return 0 }

// peakMappings needs /proc/PID/smaps.
func (b *bench) peakMappings(string, string, []fakemodel.Reply) error {
	fmt.Println("  -smaps: needs Linux")
	return nil
}

// dropPageCache is Linux's (rss_linux.go); elsewhere RSS is not measured.
func dropPageCache(string) error { return nil }
