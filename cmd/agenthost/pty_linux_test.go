package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// ptyRun is the "ptyrun" program of the script tests:
//
//	ptyrun [-cols N] CMD ARGS...
//
// runs CMD with its stdout and its stderr each on a pseudo-terminal of its
// own (stdin is /dev/null, or the script's terminal after 'ttyin -stdin'), prints what each terminal received to its own
// stdout and stderr, and exits with CMD's exit code. The terminal's output
// processing turns every "\n" into "\r\n"; ptyrun folds "\r\n" back, so a
// script sees the program's bytes, and a lone "\r" stays visible. With
// -cols N, the stdout terminal is N columns wide (24 rows); without, its
// size is not set, and a program sees no width.
func ptyRun() int {
	args := os.Args[1:]
	cols := 0
	if len(args) > 1 && args[0] == "-cols" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "ptyrun: -cols wants a positive number, not %q\n", args[1])
			return 2
		}
		cols, args = n, args[2:]
	}
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: ptyrun [-cols N] CMD ARGS...")
		return 2
	}
	outM, outS, err := openPTY()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyrun: %v\n", err)
		return 2
	}
	if cols > 0 {
		ws := struct{ rows, cols, x, y uint16 }{24, uint16(cols), 0, 0}
		if err := ioctl(outS, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); err != nil {
			fmt.Fprintf(os.Stderr, "ptyrun: set the terminal's size: %v\n", err)
			return 2
		}
	}
	errM, errS, err := openPTY()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyrun: %v\n", err)
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = outS, errS
	if isTerminal(os.Stdin) {
		// A script's 'ttyin -stdin' terminal: the program reads it (and
		// has it as its controlling terminal, like ptyrun).
		cmd.Stdin = os.Stdin
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyrun: %v\n", err)
		return 2
	}
	// Only the child holds the terminals now: reading their other ends
	// fails (EIO) once it has exited and everything it wrote was read.
	outS.Close()
	errS.Close()
	var wg sync.WaitGroup
	var stdout, stderr bytes.Buffer
	for _, c := range []struct {
		dst *bytes.Buffer
		src *os.File
	}{{&stdout, outM}, {&stderr, errM}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(c.dst, c.src) // ends with EIO
		}()
	}
	werr := cmd.Wait()
	wg.Wait()
	outM.Close()
	errM.Close()
	os.Stdout.Write(bytes.ReplaceAll(stdout.Bytes(), []byte("\r\n"), []byte("\n")))
	os.Stderr.Write(bytes.ReplaceAll(stderr.Bytes(), []byte("\r\n"), []byte("\n")))
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return ee.ExitCode()
	}
	if werr != nil {
		fmt.Fprintf(os.Stderr, "ptyrun: %v\n", werr)
		return 2
	}
	return 0
}

// openPTY opens a new pseudo-terminal pair: the controlling side and the
// terminal a program writes to.
func openPTY() (ctrl, tty *os.File, err error) {
	ctrl, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if err := ioctl(ctrl, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		ctrl.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	var n uint32
	if err := ioctl(ctrl, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		ctrl.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		ctrl.Close()
		return nil, nil, err
	}
	return ctrl, tty, nil
}

func ioctl(f *os.File, req, arg uintptr) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
