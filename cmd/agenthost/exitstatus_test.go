package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// exitStatus is the "exitstatus" program of the script tests:
//
//	exitstatus CMD ARGS...
//
// runs CMD with the same stdin, stdout and stderr, passes the SIGINT it
// gets on to CMD, and when CMD has ended prints "exit status N" on stderr
// and exits 0, so that a script run in the background ('&name&', where
// testscript only tells success from failure) can check CMD's exact code.
func exitStatus() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: exitstatus CMD ARGS...")
		return 2
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "exitstatus: %v\n", err)
		return 2
	}
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "exitstatus: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "exit status %d\n", code)
	return 0
}
