package term

import (
	"context"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// LineEditor is the chat's input line: x/term's Terminal over the chat's
// keyboard (Keys), on the terminal tty.
type LineEditor struct {
	tty  *os.File
	line *term.Terminal
}

// NewLineEditor edits lines on tty, each after prompt.
func NewLineEditor(tty *os.File, prompt string) *LineEditor {
	keys := NewKeys(tty)
	line := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, tty}, prompt)
	line.AutoCompleteCallback = keys.Complete
	keys.Notice = func(s string) { line.Write([]byte(s + "\n")) }
	return &LineEditor{tty: tty, line: line}
}

// SetHistory gives the lines the up and down keys recall.
func (l *LineEditor) SetHistory(h term.History) { l.line.History = h }

// ReadLine reads one line in raw mode, its pasted line breaks restored
// (PasteLine); the terminal's mode is restored before it returns. A
// cancelled ctx (SIGTERM) unblocks it by closing the terminal.
func (l *LineEditor) ReadLine(ctx context.Context) (string, error) {
	fd := int(l.tty.Fd())
	st, err := term.MakeRaw(fd)
	if err != nil {
		return "", err
	}
	var once sync.Once
	restore := func() { once.Do(func() { term.Restore(fd, st) }) }
	defer restore()
	stop := context.AfterFunc(ctx, func() {
		restore()
		l.tty.Close()
	})
	defer stop()
	// Bracketed paste only while the line is read: during a turn the
	// terminal would echo the markers of a paste.
	l.line.SetBracketedPasteMode(true)
	defer l.line.SetBracketedPasteMode(false)
	line, err := l.line.ReadLine()
	return PasteLine(line), err
}
