// Command cli is a plain WASI command (no agenthost protocol) for wasi_cli
// tests: it prints its arguments and its stdin upper-cased; "--exit N" makes
// it exit with N after printing to stderr.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "--exit" {
		n, _ := strconv.Atoi(args[1])
		fmt.Fprintln(os.Stderr, "cli: failing on purpose")
		fmt.Print("partial output")
		os.Exit(n)
	}
	in, _ := io.ReadAll(os.Stdin)
	fmt.Printf("argv0=%s args=%s stdin=%s", os.Args[0], strings.Join(args, "|"), strings.ToUpper(string(in)))
}
