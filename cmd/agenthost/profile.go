package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole process to the file named
// by AGENTHOST_CPUPROFILE, for measuring the host (bench/README.md). The
// returned function stops it; it is a no-op when the variable is unset.
func startProfile(getenv func(string) string, stderr *os.File) func() {
	path := getenv("AGENTHOST_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: AGENTHOST_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
