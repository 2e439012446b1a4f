package term

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Keys is the chat's keyboard between the terminal and x/term's
// Terminal. It does two things the Terminal does not:
//
// Ctrl-C behaves as in a shell: with text on the line it clears the line,
// at an empty prompt it leaves. The Terminal ends ReadLine on Ctrl-C
// whatever the line holds, so the key is handed to it as a private-use
// rune instead, which reaches AutoCompleteCallback with the line; leaving
// is then a Ctrl-D at the empty line, fed on the Terminal's next read.
//
// A bracketed paste (the terminal sends ESC[200~ TEXT ESC[201~ once the
// chat asks for it) becomes part of one line: its line breaks are shown
// as ⏎ and become line breaks again when the line is entered (PasteLine),
// a tab becomes four spaces, other control characters are dropped, so a
// pasted text is one message and nothing in it acts as a key. The paste
// is inserted whole at the cursor by Complete (the Terminal itself drops
// keys past 4096 runes a line, without a word): a paste that would make
// the line longer than MaxLine runes is not inserted, and Notice says so.
type Keys struct {
	r       io.Reader
	leave   bool     // Ctrl-C came at an empty line
	pasting bool     // inside a bracketed paste
	carry   []byte   // the start of a paste marker cut by a read
	pasted  []byte   // the paste being read
	pastes  []string // pastes ended, each waiting for its pasteRune
	out     []byte   // keys ready for the Terminal
	buf     []byte

	// Notice shows a line above the prompt (a refused paste).
	Notice func(string)
}

// MaxLine is the longest line, in runes, a paste may make: 64 Ki, 16 times
// what the Terminal takes typed.
const MaxLine = 64 << 10

// NewKeys is the keyboard of the terminal r reads; Complete is the
// Terminal's AutoCompleteCallback.
func NewKeys(r io.Reader) *Keys { return &Keys{r: r} }

// ctrlCRune stands for Ctrl-C between Keys.Read and Complete, pasteRune
// for the next ended paste.
const (
	ctrlCRune = '\uE003'
	pasteRune = '\uE004'
)

// pastedBreak shows a line break of a paste on the input line.
const pastedBreak = "⏎"

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

func (k *Keys) Read(p []byte) (int, error) {
	if k.leave {
		k.leave = false
		p[0] = 4 // Ctrl-D at an empty line: ReadLine returns io.EOF
		return 1, nil
	}
	for len(k.out) == 0 {
		if k.buf == nil {
			k.buf = make([]byte, 4096)
		}
		n, err := k.r.Read(k.buf)
		k.feed(k.buf[:n])
		if err != nil {
			if len(k.out) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, k.out)
	k.out = k.out[n:]
	return n, nil
}

// feed turns bytes from the terminal into keys for the Terminal.
func (k *Keys) feed(data []byte) {
	if len(k.carry) > 0 {
		data = append(k.carry, data...)
		k.carry = nil
	}
	for len(data) > 0 {
		marker, emit := pasteStart, k.keys
		if k.pasting {
			marker, emit = pasteEnd, k.paste
		}
		i := bytes.Index(data, marker)
		if i < 0 {
			n := prefixSuffix(data, marker)
			if n == 0 && k.pasting && data[len(data)-1] == '\r' {
				n = 1 // a CRLF cut by a read: one line break
			}
			emit(data[:len(data)-n])
			k.carry = append(k.carry, data[len(data)-n:]...)
			return
		}
		emit(data[:i])
		data = data[i+len(marker):]
		if k.pasting {
			k.pastes = append(k.pastes, string(k.pasted))
			k.pasted = nil
			k.out = append(k.out, string(pasteRune)...)
		}
		k.pasting = !k.pasting
	}
}

// prefixSuffix is the length of the longest end of data that begins
// marker (a marker a read may have cut).
func prefixSuffix(data, marker []byte) int {
	for n := min(len(data), len(marker)-1); n > 0; n-- {
		if bytes.HasPrefix(marker, data[len(data)-n:]) {
			return n
		}
	}
	return 0
}

// keys passes typed keys on, Ctrl-C as ctrlCRune.
func (k *Keys) keys(b []byte) {
	for _, c := range b {
		if c == 3 {
			k.out = append(k.out, string(ctrlCRune)...)
		} else {
			k.out = append(k.out, c)
		}
	}
}

// paste keeps pasted text as text, for Complete to insert at pasteRune.
func (k *Keys) paste(b []byte) {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
		case c == '\r' || c == '\n':
			k.pasted = append(k.pasted, pastedBreak...)
		case c == '\t':
			k.pasted = append(k.pasted, "    "...)
		case c < 0x20 || c == 0x7f:
		default:
			k.pasted = append(k.pasted, c)
		}
	}
}

// PasteLine is an entered line with its pasted line breaks restored.
func PasteLine(line string) string { return strings.ReplaceAll(line, pastedBreak, "\n") }

// Complete is the Terminal's AutoCompleteCallback: it sees every key that
// is not an editing key, so the stand-ins for Ctrl-C and a paste too.
func (k *Keys) Complete(line string, pos int, key rune) (string, int, bool) {
	if key == pasteRune && len(k.pastes) > 0 {
		p := k.pastes[0]
		k.pastes = k.pastes[1:]
		if n, m := utf8.RuneCountInString(line), utf8.RuneCountInString(p); n+m > MaxLine {
			if k.Notice != nil {
				k.Notice(fmt.Sprintf("agenthost: the paste of %d characters was not added: a message holds at most %d; put a longer text in a file under a mount and name it", m, MaxLine))
			}
			return line, pos, true
		}
		return line[:pos] + p + line[pos:], pos + len(p), true
	}
	if key != ctrlCRune {
		return "", 0, false
	}
	if line == "" {
		k.leave = true
	}
	return "", 0, true
}
