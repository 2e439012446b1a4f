// Package termtext makes untrusted text safe to print on a terminal.
//
// Model text, tool output, provider error messages and anything else the
// host did not write itself may carry control sequences: an OSC that sets
// the window title or writes the clipboard (ESC ] ... BEL), a CSI that
// clears the screen or moves the cursor (ESC [ 2 J), a lone carriage return
// that overwrites the line, their 8-bit C1 forms (U+009B is CSI). A terminal
// obeys them. The command line passes such text through Escape (or a
// Writer, for text streamed in pieces) before it reaches a terminal; output
// that is not a terminal stays exact.
//
// The escapes are visible rather than silent, so a reader sees that the
// text carried something: a C0 control or DEL becomes \xNN ("\x1b", "\x07"),
// a lone carriage return "\r", a C1 control \u00NN ("\u009b"), a byte that
// is not UTF-8 \xNN. Newline and tab are kept, and so is a carriage return
// directly before a newline (a CRLF line end is harmless). Backslashes are
// not doubled: a text that spells "\x1b" itself looks the same as an
// escaped ESC, which is harmless.
//
// Not covered: printable characters that change how text reads (bidi
// overrides such as U+202E, homoglyphs, zero-width characters) are kept.
package termtext

import (
	"io"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safe reports whether s needs no escaping.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
		case c < 0x20 || c == 0x7f:
			return false
		case c >= 0x80:
			return safeUTF8(s[i:])
		}
	}
	return true
}

// safeUTF8 is the slow half of safe: s starts at a non-ASCII byte.
func safeUTF8(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r >= 0x80 && r <= 0x9f) {
			return false
		}
		i += n
	}
	return true
}

// Escape returns s with control characters made visible (see the package
// documentation). A string that needs nothing is returned as is, without
// allocating.
func Escape(s string) string {
	if safe(s) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+16), s))
}

// appendEscaped appends s escaped to dst. A carriage return at the end of s
// counts as lone: a Writer holds it back until it knows what follows.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f):
			dst = append(dst, c)
			i++
			continue
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				dst = append(dst, '\r')
			} else {
				dst = append(dst, '\\', 'r')
			}
			i++
			continue
		case c < 0x80: // other C0 controls and DEL
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case r >= 0x80 && r <= 0x9f:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// Writer escapes text written to it in pieces, as a stream arrives, and
// writes it to an underlying writer. A piece may end inside a UTF-8
// sequence or right after a carriage return: those bytes are held until the
// next Write shows how they continue, or until Flush. Each Write makes at
// most one Write to the underlying writer. A Writer is not safe for
// concurrent use.
type Writer struct {
	w    io.Writer
	held []byte // an incomplete UTF-8 sequence or a trailing '\r'
	buf  []byte
}

// NewWriter returns a Writer that writes escaped text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes what can be decided. It reports len(p) unless
// the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	cut := holdFrom(data)
	if cut < len(data) {
		w.held = append([]byte(nil), data[cut:]...)
	}
	if cut == 0 {
		return len(p), nil
	}
	w.buf = appendEscaped(w.buf[:0], string(data[:cut]))
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes the held bytes, escaped as the end of the text: an
// incomplete UTF-8 sequence as \xNN, a lone carriage return as \r.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	w.buf = appendEscaped(w.buf[:0], string(w.held))
	w.held = nil
	_, err := w.w.Write(w.buf)
	return err
}

// Pending reports whether bytes are held back for the next Write or Flush.
func (w *Writer) Pending() bool { return len(w.held) > 0 }

// holdFrom returns the index from which b's tail must wait for more input:
// a final '\r' (a '\n' may follow) or the start of a final UTF-8 sequence
// that is not complete yet. len(b) when nothing waits.
func holdFrom(b []byte) int {
	n := len(b)
	if n == 0 {
		return 0
	}
	if b[n-1] == '\r' {
		return n - 1
	}
	for i := n - 1; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return n
}

// Line is Escape for text shown within one line of a terminal: a newline
// and a tab become visible too ("\n", "\t"), so that the text cannot start
// a line of its own, and every carriage return is shown as "\r".
func Line(s string) string {
	if safe(s) && !strings.ContainsAny(s, "\n\t") {
		return s
	}
	dst := make([]byte, 0, len(s)+16)
	for {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			return string(appendEscaped(dst, s))
		}
		dst = appendEscaped(dst, s[:i])
		if s[i] == '\n' {
			dst = append(dst, '\\', 'n')
		} else {
			dst = append(dst, '\\', 't')
		}
		s = s[i+1:]
	}
}
