package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// peakRSS is the "peakrss" program of the script tests:
//
//	peakrss MAX_MIB CMD ARGS...
//
// runs CMD with the same stdin, stdout and stderr and, once it has ended,
// prints "peak rss N MiB" on stderr: the most memory CMD had resident at
// any time, as the kernel counted it (getrusage's ru_maxrss of the waited
// process). It exits with CMD's code, or 98 after "peakrss: over MAX_MIB
// MiB" when N is more than MAX_MIB. Where the kernel does not count it (not
// Linux or macOS), it says so and checks nothing.
func peakRSS() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peakrss MAX_MIB CMD ARGS...")
		return 2
	}
	limit, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "peakrss: MAX_MIB %q is not a number\n", os.Args[1])
		return 2
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "peakrss: %v\n", err)
		return 2
	}
	peak, ok := maxRSS(cmd.ProcessState)
	if !ok {
		fmt.Fprintf(os.Stderr, "peak rss unknown on %s\n", runtime.GOOS)
		return code
	}
	mib := peak >> 20
	fmt.Fprintf(os.Stderr, "peak rss %d MiB\n", mib)
	if mib > int64(limit) {
		fmt.Fprintf(os.Stderr, "peakrss: over %d MiB\n", limit)
		return 98
	}
	return code
}
