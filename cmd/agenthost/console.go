package main

import (
	"io"
	"sync"

	"github.com/agenthost/agenthost/internal/termtext"
)

// console is stdout and stderr of a command that prints an answer (run,
// chat). The answer goes to stdout and may end without a newline; progress,
// logs, errors and the last line go to stderr, and often reach the same
// terminal or file (2>&1). So that nothing runs into the answer's last
// line, the console ends that line on stdout before anything is written to
// stderr. Writes to both streams are serialised by one lock, which also
// keeps the newline and the stderr write that needed it together.
//
// Streamed text on a terminal goes through a termtext.Writer that may hold
// a few bytes (a cut UTF-8 sequence, a lone \r); ending the line flushes
// them first, so the escaped text stays whole.
type console struct {
	mu   sync.Mutex
	out  io.Writer        // the real stdout
	term *termtext.Writer // streamed text on a terminal: escaped, over out
	open bool             // the last byte written to stdout is not a newline
}

// newConsole makes the console of stdout; escape says whether text
// streamed with stream is escaped (stdout is a terminal).
func newConsole(stdout io.Writer, escape bool) *console {
	c := &console{out: stdout}
	if escape {
		c.term = termtext.NewWriter(lineTracker{c})
	}
	return c
}

// guardLines routes the command's stdout and stderr through a console, once
// per process: run and chat call it before anything is printed. It returns
// the console.
func (e *env) guardLines() *console {
	if e.con == nil {
		e.con = newConsole(e.stdout, e.stdoutTTY)
		e.stdout = consoleOut{e.con}
		e.stderr = consoleErr{e.con, e.stderr}
	}
	return e.con
}

// stream writes streamed answer text to stdout, escaped on a terminal.
func (c *console) stream(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term != nil {
		c.term.WriteString(s)
	} else {
		c.write([]byte(s))
	}
}

// endLine ends the line stdout left open, if it did.
func (c *console) endLine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLineLocked()
}

func (c *console) endLineLocked() {
	if c.term != nil {
		c.term.Flush() // a lone \r or a cut UTF-8 sequence, escaped
	}
	if c.open {
		c.write([]byte{'\n'})
	}
}

// lineOpen reports whether stdout's last line is still open: nothing, not
// even a newline the console added for stderr, was written after it.
func (c *console) lineOpen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// flush writes what the terminal writer holds, without ending the line.
func (c *console) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term != nil {
		c.term.Flush()
	}
}

// write writes p to stdout and notes whether it ended a line; c.mu is held.
func (c *console) write(p []byte) (int, error) {
	n, err := c.out.Write(p)
	if n > 0 {
		c.open = p[n-1] != '\n'
	}
	return n, err
}

// lineTracker is stdout for the terminal writer: c.mu is held when it
// writes.
type lineTracker struct{ c *console }

func (w lineTracker) Write(p []byte) (int, error) { return w.c.write(p) }

// consoleOut is the command's stdout.
type consoleOut struct{ c *console }

func (w consoleOut) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.write(p)
}

// consoleErr is the command's stderr: each write first ends the line
// stdout left open.
type consoleErr struct {
	c *console
	w io.Writer
}

func (w consoleErr) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.endLineLocked()
	return w.w.Write(p)
}
