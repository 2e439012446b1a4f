package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ptyTypeTimeout bounds one expect: a program that never prints what the
// script waits for fails the script instead of hanging the tests.
const ptyTypeTimeout = 30 * time.Second

// ptyType is the "ptytype" program of the script tests, a person at a
// terminal:
//
//	ptytype SCRIPT CMD ARGS...
//
// runs CMD in a session of its own with stdin, stdout and stderr on one
// pseudo-terminal, its controlling terminal (so Ctrl-C typed there is a
// SIGINT), and follows SCRIPT, one step a line:
//
//	expect REGEXP   wait until the terminal's output after the previous
//	                match matches REGEXP
//	send "TEXT"     type TEXT (a Go string literal: "hi\n", "\x03" for Ctrl-C)
//
// Then it waits for CMD to end, prints everything the terminal received
// ("\r\n" folded to "\n") and exits with CMD's exit code.
func ptyType() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: ptytype SCRIPT CMD ARGS...")
		return 2
	}
	steps, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptytype: %v\n", err)
		return 2
	}
	ctrl, tty, err := openPTY()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptytype: %v\n", err)
		return 2
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ptytype: %v\n", err)
		return 2
	}
	tty.Close()

	var (
		mu   sync.Mutex
		out  []byte
		done bool
	)
	more := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ctrl.Read(buf)
			mu.Lock()
			out = append(out, buf[:n]...)
			done = err != nil // EIO once CMD has exited and all was read
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	dump := func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n")))
	}
	fail := func(format string, a ...any) int {
		cmd.Process.Kill()
		cmd.Wait()
		fmt.Fprintf(os.Stderr, "ptytype: "+format+"\nthe terminal holds:\n%s\n", append(a, dump())...)
		return 2
	}

	pos := 0
	sc := bufio.NewScanner(bytes.NewReader(steps))
	sc.Buffer(nil, 1<<20) // a send may hold a long paste
	for line := 1; sc.Scan(); line++ {
		op, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch op {
		case "", "#":
		case "send":
			s, err := strconv.Unquote(arg)
			if err != nil {
				return fail("line %d: send needs a Go string literal: %v", line, err)
			}
			if _, err := ctrl.Write([]byte(s)); err != nil {
				return fail("line %d: %v", line, err)
			}
		case "expect":
			re, err := regexp.Compile(arg)
			if err != nil {
				return fail("line %d: %v", line, err)
			}
			deadline := time.After(ptyTypeTimeout)
			for {
				mu.Lock()
				text := bytes.ReplaceAll(out[pos:], []byte("\r\n"), []byte("\n"))
				loc := re.FindIndex(text)
				ended := done
				mu.Unlock()
				if loc != nil {
					// pos moves past the match in the raw bytes.
					pos += loc[1] + crlfBefore(out[pos:], loc[1])
					break
				}
				if ended {
					return fail("line %d: %s never came: the program ended", line, arg)
				}
				select {
				case <-more:
				case <-deadline:
					return fail("line %d: %s did not come in %s", line, arg, ptyTypeTimeout)
				}
			}
		default:
			return fail("line %d: unknown step %q: use expect REGEXP or send \"TEXT\"", line, op)
		}
	}
	werr := cmd.Wait()
	for {
		mu.Lock()
		ended := done
		mu.Unlock()
		if ended {
			break
		}
		<-more
	}
	ctrl.Close()
	os.Stdout.WriteString(dump())
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return ee.ExitCode()
	}
	if werr != nil {
		fmt.Fprintf(os.Stderr, "ptytype: %v\n", werr)
		return 2
	}
	return 0
}

// crlfBefore counts the "\r\n" pairs in raw whose folded form ends before
// folded offset n.
func crlfBefore(raw []byte, n int) int {
	c, folded := 0, 0
	for i := 0; i < len(raw) && folded < n; i++ {
		if raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n' {
			c++
			continue
		}
		folded++
	}
	return c
}
