// A WASI command written in Go, adapted into a command component (it
// exports wasi:cli/run) by internal/componenttest.GoCommand: the tests
// run it as a component tool with a command line and stdin.
//
//	gocmd wc          counts the lines, words and bytes of stdin
//	gocmd cat PATH    prints a file (from a mount)
//	gocmd echo ARG... prints its arguments, one a line
//	gocmd fail CODE   writes to stderr and stdout, exits with CODE
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gocmd wc|cat|echo|fail")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "wc":
		b, err := io.ReadAll(bufio.NewReader(os.Stdin))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%d %d %d\n", bytes.Count(b, []byte("\n")), len(bytes.Fields(b)), len(b))
	case "cat":
		b, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	case "echo":
		for _, a := range os.Args[2:] {
			fmt.Println(a)
		}
	case "fail":
		code, _ := strconv.Atoi(os.Args[2])
		fmt.Println("some output first")
		fmt.Fprintln(os.Stderr, "failing as asked")
		os.Exit(code)
	default:
		fmt.Fprintf(os.Stderr, "gocmd: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
