// Package term draws agenthost's terminal: the console that keeps the
// answer on stdout and everything else on stderr apart, the chat's
// spinner, keyboard and Markdown, and the approval prompt. Everything the
// model or a plugin wrote is escaped (internal/termtext) before it is
// placed; the only control sequences that reach the terminal are the ones
// drawn here.
package term

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/agenthost/agenthost/internal/termtext"
)

// Console is stdout and stderr of a command that prints an answer (run,
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
type Console struct {
	mu   sync.Mutex
	out  io.Writer        // the real stdout
	term *termtext.Writer // streamed text on a terminal: escaped, over out
	open bool             // the last byte written to stdout is not a newline
	seq  uint64           // writes to stdout and stderr so far

	// The spinner of a chat's turn (StartSpinner): a line on stderr,
	// cleared before anything else is written to either stream.
	errW      io.Writer // the real stderr
	spinW     io.Writer // errW while a spinner runs
	spinOn    bool      // the spinner's line is on the screen
	spinHeld  int       // something else is using the terminal: do not draw
	spinLabel string    // what is awaited: "thinking", a tool and its key argument
}

// NewConsole makes the console of a command's stdout and stderr; escape
// says whether text streamed with Stream is escaped (stdout is a
// terminal). Run and chat make one, once, before anything is printed, and
// write through Out and Err from then on.
func NewConsole(stdout, stderr io.Writer, escape bool) *Console {
	c := &Console{out: stdout, errW: stderr}
	if escape {
		c.term = termtext.NewWriter(lineTracker{c})
	}
	return c
}

// Out is the command's stdout through the console.
func (c *Console) Out() io.Writer { return consoleOut{c} }

// Err is the command's stderr through the console: each write first ends
// the line stdout left open.
func (c *Console) Err() io.Writer { return consoleErr{c, c.errW} }

// Stream writes streamed answer text to stdout, escaped on a terminal.
func (c *Console) Stream(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearSpinLocked()
	if c.term != nil {
		c.term.WriteString(s)
	} else {
		c.write([]byte(s))
	}
}

// EndLine ends the line stdout left open, if it did.
func (c *Console) EndLine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLineLocked()
}

func (c *Console) endLineLocked() {
	c.clearSpinLocked()
	if c.term != nil {
		c.term.Flush() // a lone \r or a cut UTF-8 sequence, escaped
	}
	if c.open {
		c.write([]byte{'\n'})
	}
}

// LineOpen reports whether stdout's last line is still open: nothing, not
// even a newline the console added for stderr, was written after it.
func (c *Console) LineOpen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// Flush writes what the terminal writer holds, without ending the line.
func (c *Console) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term != nil {
		c.term.Flush()
	}
}

// write writes p to stdout and notes whether it ended a line; c.mu is held.
func (c *Console) write(p []byte) (int, error) {
	c.seq++
	n, err := c.out.Write(p)
	if n > 0 {
		c.open = p[n-1] != '\n'
	}
	return n, err
}

// lineTracker is stdout for the terminal writer: c.mu is held when it
// writes.
type lineTracker struct{ c *Console }

func (w lineTracker) Write(p []byte) (int, error) { return w.c.write(p) }

// consoleOut is the command's stdout.
type consoleOut struct{ c *Console }

func (w consoleOut) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.clearSpinLocked()
	return w.c.write(p)
}

// consoleErr is the command's stderr: each write first ends the line
// stdout left open.
type consoleErr struct {
	c *Console
	w io.Writer
}

func (w consoleErr) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.endLineLocked() // clears the spinner too
	w.c.seq++
	return w.w.Write(p)
}

// WriteStyled writes text that is already escaped and styled for the
// terminal (the chat's rendered Markdown) to stdout as it is. It returns
// the count of writes so far (SeqNow).
func (c *Console) WriteStyled(s string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearSpinLocked()
	if c.term != nil {
		c.term.Flush()
	}
	c.write([]byte(s))
	return c.seq
}

// SeqNow is the count of writes to stdout and stderr so far: unchanged
// since a write, nothing came after it on either stream.
func (c *Console) SeqNow() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// Columns is the width of stdout's terminal, 80 when unknown.
func (c *Console) Columns() int {
	if w := ColumnsOf(c.out); w > 0 {
		return w
	}
	return 80
}

// ColumnsOf is the width of the terminal w writes to, 0 when w is not a
// terminal or its width is not known. It reaches the descriptor through
// SyscallConn, not Fd: Fd would put a file in blocking mode, and a read of
// /dev/tty could then no longer be cut short (Asker.ReadLine).
func ColumnsOf(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	sc.Control(func(fd uintptr) {
		if c, _, err := term.GetSize(int(fd)); err == nil && c > 0 {
			n = c
		}
	})
	return n
}

// spinFrames are the spinner's frames, one every spinTick.
var spinFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

const spinTick = 100 * time.Millisecond

// StartSpinner shows that the chat is alive while it waits: a frame, what
// is awaited and the time since the turn began, redrawn in place on
// stderr (a terminal) every spinTick, and cleared before anything else is
// written. It is not drawn while the answer's last line is open on the
// same terminal, nor while held. stop clears it and returns once it is
// gone.
func (c *Console) StartSpinner() (stop func()) {
	c.mu.Lock()
	c.spinW, c.spinLabel = c.errW, "thinking"
	c.mu.Unlock()
	start := time.Now()
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(spinTick)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			c.mu.Lock()
			if c.spinHeld == 0 && !(c.term != nil && c.open) {
				el := time.Since(start).Seconds()
				fmt.Fprintf(c.spinW, "\r%c %s %.1f s\x1b[K", spinFrames[i%len(spinFrames)], c.spinLabel, el)
				c.spinOn = true
			}
			c.mu.Unlock()
		}
	}()
	return func() {
		close(quit)
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		c.clearSpinLocked()
		c.spinW = nil
	}
}

// clearSpinLocked removes the spinner's line; c.mu is held.
func (c *Console) clearSpinLocked() {
	if c.spinOn {
		io.WriteString(c.spinW, "\r\x1b[K")
		c.spinOn = false
	}
}

// SetSpinLabel says what the spinner shows as awaited; label is escaped.
// It is cut to SpinLabelMax runes by the caller.
func (c *Console) SetSpinLabel(label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spinLabel = label
}

// SpinLabelMax is the most runes a spinner's label may have: it keeps the
// spinner's line (frame, label, time) within 70 columns, as a line that
// wrapped would not be cleared by the next frame. The caller cuts the
// label to it.
const SpinLabelMax = 56

// HoldSpinner clears the spinner and keeps it off until release: the
// terminal is someone else's (a question to the user).
func (c *Console) HoldSpinner() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearSpinLocked()
	c.spinHeld++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.spinHeld--
	}
}
