package sandbox

import (
	"fmt"
	"strings"
)

// TailSize is how much of the end of what a guest writes an Output keeps
// besides its head: the end of stderr that a Failure shows.
const TailSize = 2048

// Output is a guest's stdout or stderr: it keeps the first max bytes
// written to it and the last TailSize bytes, and counts the rest without
// storing it. Once more than twice max was written it calls flood once,
// so a guest that floods its output is stopped instead of spinning until
// its timeout. Writes never fail. Every kind's guest writes through one.
//
// With Lines set, the lines Lines takes out of what is written count
// toward the flood like any output but are not kept (an agenthost/1
// plugin's notification lines), so the text, tail and summary are the
// guest's other output.
type Output struct {
	max   int64
	buf   []byte
	total int64           // bytes written
	kept  int64           // bytes of them that are output: total less what Lines took
	ring  *[TailSize]byte // made by the first write: most calls write no stderr
	pos   int
	full  bool
	flood func()
	fired bool
	// Lines, when set, sees every write instead of Keep and passes on
	// (Keep) what is output.
	Lines LineFilter
}

// LineFilter takes lines out of what a guest writes.
type LineFilter interface {
	// Split passes the parts of b that are output to w.Keep.
	Split(w *Output, b []byte)
	// Flush passes to w.Keep what it holds of a line not yet ended.
	Flush(w *Output)
}

// NewOutput makes an Output that keeps max bytes; flood may be nil.
func NewOutput(max int64, flood func()) *Output {
	return &Output{max: max, flood: flood}
}

func (w *Output) Write(b []byte) (int, error) {
	n := len(b)
	if n == 0 {
		return 0, nil
	}
	w.total += int64(n)
	if w.Lines != nil {
		w.Lines.Split(w, b)
	} else {
		w.Keep(b)
	}
	if !w.fired && w.flood != nil && w.total > 2*w.max {
		w.fired = true
		w.flood()
	}
	return n, nil
}

// Keep stores b as output: in the first max bytes and the tail.
func (w *Output) Keep(b []byte) {
	n := len(b)
	if n == 0 {
		return
	}
	if w.ring == nil {
		w.ring = new([TailSize]byte)
	}
	w.kept += int64(n)
	if room := w.max - int64(len(w.buf)); room > 0 {
		w.buf = append(w.buf, b[:min(int64(n), room)]...)
	}
	if n >= TailSize {
		copy(w.ring[:], b[n-TailSize:])
		w.pos, w.full = 0, true
	} else {
		c := copy(w.ring[w.pos:], b)
		if c < n {
			copy(w.ring[:], b[c:])
			w.full = true
		}
		w.pos = (w.pos + n) % TailSize
		if w.pos == 0 && n > 0 {
			w.full = true
		}
	}
}

func (w *Output) flush() {
	if w.Lines != nil {
		w.Lines.Flush(w)
	}
}

// Flooded reports whether more than twice max was written.
func (w *Output) Flooded() bool { return w.total > 2*w.max }

// Written is how many bytes were written.
func (w *Output) Written() int64 { return w.total }

// Kept is how many bytes of output were stored so far: what Lines took
// out, or holds of a line not yet ended, not counted.
func (w *Output) Kept() int64 { return w.kept }

// Head is the first max bytes of output. The caller must not change it.
func (w *Output) Head() []byte {
	w.flush()
	return w.buf
}

// Truncated reports whether output was dropped.
func (w *Output) Truncated() bool {
	w.flush()
	return w.kept > int64(len(w.buf))
}

// Text is the kept output, with a marker when some was dropped.
func (w *Output) Text() string {
	w.flush()
	s := ValidUTF8(w.buf)
	if w.Truncated() {
		s += fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", len(w.buf), w.kept)
	}
	return s
}

// Summary is the start and the end of what was written (at most about
// TailSize bytes), as valid UTF-8: the start of a crash report says what
// happened, its end where.
func (w *Output) Summary() string {
	w.flush()
	if w.kept <= TailSize {
		return w.Tail()
	}
	head := w.buf[:min(len(w.buf), TailSize/2)]
	t := w.Tail()
	if len(t) > TailSize/2 {
		t = t[len(t)-TailSize/2:]
	}
	return strings.TrimSpace(ValidUTF8(head)) + "\n…\n" + strings.TrimSpace(ValidUTF8([]byte(t)))
}

// Tail is the last bytes written, as valid UTF-8.
func (w *Output) Tail() string {
	w.flush()
	var b []byte
	if w.ring == nil {
		return ""
	}
	if w.full {
		b = append(append(b, w.ring[w.pos:]...), w.ring[:w.pos]...)
	} else {
		b = w.ring[:w.pos]
	}
	return strings.TrimSpace(ValidUTF8(b))
}
