package mcpuse

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// What an MCP server sends is read through a cutReader, so that a result
// far over max_output never sits in memory: every JSON string longer than
// max_output (and than minCut) is cut while it streams in, and what is kept
// of a message is bounded (messageLimit). The SDK then decodes messages of
// bounded size, and toResult cuts the result's text to exactly max_output
// with the note a plugin's output gets. How much is read is bounded in
// time: a call's response by the call's timeout.

// cutMarker ends a string the cutReader cut: the note of a plugin's output,
// with the bytes kept and the string's full length. toResult reads it back
// to state the full length of a result.
const cutMarker = "\n[output truncated: %d of %d bytes shown]"

var cutMarkerRE = regexp.MustCompile(`\n\[output truncated: (\d+) of (\d+) bytes shown\]$`)

// minCut is the shortest string a cutReader cuts, whatever max_output:
// the strings of the protocol itself (keys, versions, schemas, tool
// descriptions) stay whole, and the exact cut is toResult's.
const minCut = 64 << 10

// stringLimit is the length past which a cutReader cuts a string.
func stringLimit(maxOutput int64) int64 { return max(maxOutput, minCut) }

// messageLimit is the most the cutReader keeps of one message (an HTTP
// JSON body, an SSE line, a stdio line), once long strings are cut: room
// for several strings of max_output bytes even when JSON escapes make them
// six times longer, and never below the SDK's own default (16 MiB).
func messageLimit(maxOutput int64) int64 { return max(16<<20, 8*maxOutput) }

// errMessageTooBig is what reading a message over messageLimit fails with.
var errMessageTooBig = errors.New("MCP message too big")

// cutMode says where the messages of a stream end.
type cutMode int

const (
	// oneMessage: the whole stream is one message (an application/json
	// HTTP body).
	oneMessage cutMode = iota
	// lineMessages: each line is one (stdio; an SSE stream, whose data
	// lines carry the messages).
	lineMessages
)

// cutReader passes a stream of JSON texts through, cutting every string
// (key or value) longer than max bytes once decoded: the first max bytes
// are kept (a little more to end on a whole character or escape) and
// cutMarker follows. A string under the key "data" or "blob" (base64: an
// image, audio or a blob resource) is cut at a multiple of four
// characters without the marker, so that it still decodes. A raw newline
// always ends a string (JSON has none inside one), so SSE framing and
// broken input cannot keep the reader inside one for ever. It fails with
// an error wrapping errMessageTooBig once more than limit bytes of one
// message were kept.
type cutReader struct {
	r     io.Reader
	max   int64 // strings longer than this are cut
	limit int64 // the most kept of one message
	mode  cutMode
	err   error  // the read error, returned once out is drained
	in    []byte // read buffer
	out   []byte // processed, not yet returned
	off   int    // out[off:] is still to be returned
	// kept counts the bytes passed on of the current message.
	kept int64

	state   int
	esc     []byte // the escape being read: `\`, `\u` and hex digits
	str     strState
	key     string // the key of the string being read, if it is a value
	prevStr string // the last string read, when it was short
	colon   bool   // a ':' came after prevStr: the next string is its value
}

// strState is what a cutReader knows of the string it is in.
type strState struct {
	shown, total int64 // decoded bytes passed on, and read
	cutting      bool  // past max: content is dropped
	b64          bool  // under "data" or "blob", and base64 so far
	highSur      bool  // the last unit passed on was a high surrogate
	short        []byte
}

const (
	stOut = iota // between strings
	stStr        // in a string
	stEsc        // after a backslash in a string
	stHex        // in the four hex digits of \u
)

func newCutReader(r io.Reader, maxOutput, limit int64, mode cutMode) *cutReader {
	return &cutReader{r: r, max: maxOutput, limit: limit, mode: mode, in: make([]byte, 32<<10)}
}

func (c *cutReader) Read(p []byte) (int, error) {
	for c.off == len(c.out) {
		if c.err != nil {
			return 0, c.err
		}
		c.out, c.off = c.out[:0], 0
		n, err := c.r.Read(c.in)
		if n > 0 {
			if perr := c.process(c.in[:n]); perr != nil {
				err = perr
			}
		}
		if err != nil {
			c.err = err
		}
	}
	n := copy(p, c.out[c.off:])
	c.off += n
	return n, nil
}

// process runs b through the cutter, appending what is passed on to out.
func (c *cutReader) process(b []byte) error {
	for i := 0; i < len(b); {
		var err error
		switch c.state {
		case stOut:
			j := i
			for j < len(b) && b[j] != '"' && b[j] != '\n' {
				c.between(b[j])
				j++
			}
			if j < len(b) {
				j++ // the quote or newline too
			}
			err = c.emit(b[i:j])
			switch b[j-1] {
			case '"':
				c.startString()
			case '\n':
				c.between('\n')
			}
			i = j
		case stStr:
			// A run of plain bytes up to the next quote, backslash or
			// newline.
			j := i
			for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] != '\n' {
				j++
			}
			err = c.content(b[i:j])
			i = j
			if err != nil || i == len(b) {
				break
			}
			switch b[i] {
			case '"':
				err = c.endString()
				i++
			case '\\':
				c.esc = append(c.esc[:0], '\\')
				c.state = stEsc
				i++
			case '\n': // not JSON; the string ends here
				c.state = stOut
			}
		case stEsc, stHex:
			x := b[i]
			if x == '\n' || (c.state == stHex && !isHex(x)) {
				// Not JSON: the escape goes on as it is, and x is read
				// again in the string.
				c.state = stStr
				err = c.unit(c.esc, int64(len(c.esc)), false, 0)
				break
			}
			c.esc = append(c.esc, x)
			i++
			switch {
			case c.state == stEsc && x == 'u':
				c.state = stHex
			case c.state == stEsc:
				c.state = stStr
				err = c.unit(c.esc, 1, x == '/', 0)
			case len(c.esc) == 6:
				c.state = stStr
				v, _ := strconv.ParseUint(string(c.esc[2:]), 16, 32)
				err = c.codePoint(rune(v))
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// between notes a byte read outside strings: what the next string is the
// value of, and where a message ends.
func (c *cutReader) between(b byte) {
	switch b {
	case ' ', '\t', '\r':
		return
	case '\n':
		if c.mode == lineMessages {
			c.kept = 0
		}
		return
	case ':':
		c.colon = c.prevStr != ""
		c.key = c.prevStr
	default:
		c.colon = false
	}
	c.prevStr = ""
}

func (c *cutReader) startString() {
	c.state = stStr
	key := ""
	if c.colon {
		key = c.key
	}
	c.colon, c.prevStr = false, ""
	c.str = strState{b64: key == "data" || key == "blob", short: c.str.short[:0]}
}

func (c *cutReader) endString() error {
	c.state = stOut
	s := &c.str
	if s.cutting && !s.b64 {
		if err := c.emit(fmt.Appendf(nil, `\n[output truncated: %d of %d bytes shown]`, s.shown, s.total)); err != nil {
			return err
		}
	}
	if len(s.short) <= 8 && s.total <= 8 {
		c.prevStr = string(s.short)
	}
	return c.emit([]byte{'"'})
}

// content handles a run of plain bytes of a string (no quote, backslash
// or newline): each is one decoded byte.
func (c *cutReader) content(b []byte) error {
	s := &c.str
	s.total += int64(len(b))
	if s.cutting || len(b) == 0 {
		return nil
	}
	if len(s.short) <= 8 {
		s.short = append(s.short, b[:min(len(b), 9-len(s.short))]...)
	}
	if s.b64 {
		for _, x := range b {
			if !isBase64(x) {
				s.b64 = false
				break
			}
		}
	}
	room := max(c.room(), 0)
	n := int64(len(b))
	if n > room {
		// Keep whole characters: go on to the next character's start.
		n = room
		for n < int64(len(b)) && !s.b64 && !utf8.RuneStart(b[n]) {
			n++
		}
		s.cutting = n < int64(len(b))
	}
	s.shown += n
	s.highSur = false
	return c.emit(b[:n])
}

// codePoint handles a \uXXXX escape of a string.
func (c *cutReader) codePoint(v rune) error {
	switch {
	case v < 0x80:
		return c.unit(c.esc, 1, false, 0)
	case v < 0x800:
		return c.unit(c.esc, 2, false, 0)
	case utf16.IsSurrogate(v): // a pair is 4 bytes
		if v < 0xDC00 {
			return c.unit(c.esc, 2, false, highSurrogate)
		}
		return c.unit(c.esc, 2, false, lowSurrogate)
	}
	return c.unit(c.esc, 3, false, 0)
}

const (
	highSurrogate = 1 + iota
	lowSurrogate
)

// unit handles one escape of a string, of size decoded bytes; base64 says
// it decodes to a base64 character, sur whether it is half of a surrogate
// pair.
func (c *cutReader) unit(esc []byte, size int64, base64 bool, sur int) error {
	s := &c.str
	s.total += size
	if len(s.short) <= 8 {
		s.short = append(s.short, esc...) // no key we look for has one
	}
	if !base64 {
		s.b64 = false
	}
	if s.cutting {
		return nil
	}
	// The low surrogate after a high one passed on completes the pair.
	if c.room() <= 0 && !(sur == lowSurrogate && s.highSur) {
		s.cutting = true
		return nil
	}
	s.shown += size
	s.highSur = sur == highSurrogate
	return c.emit(esc)
}

// room is how many more decoded bytes of the current string are kept.
func (c *cutReader) room() int64 {
	limit := c.max
	if c.str.b64 {
		limit = max(4, limit&^3)
	}
	return limit - c.str.shown
}

// emit passes b on, counting it against the message limit.
func (c *cutReader) emit(b []byte) error {
	c.kept += int64(len(b))
	if c.kept > c.limit {
		return fmt.Errorf("%w: the server sent more than %s in one message, its long strings cut to max_output (a message may hold 8 × max_output, at least 16MiB)", errMessageTooBig, bytesize.Exact(uint64(c.limit)))
	}
	c.out = append(c.out, b...)
	return nil
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

func isBase64(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '='
}

// capResult joins the texts of a result with newlines and cuts the whole
// to max bytes (at a character's start) with the note of a plugin's
// output. A text the cutReader cut counts with its full length.
func capResult(parts []string, limit int64) string {
	var total int64
	for i, p := range parts {
		if i > 0 {
			total++
		}
		n := int64(len(p))
		if m := cutMarkerRE.FindStringSubmatchIndex(p); m != nil {
			full, err := strconv.ParseInt(p[m[4]:m[5]], 10, 64)
			if err == nil {
				parts[i] = p[:m[0]]
				n = max(full, int64(m[0]))
			}
		}
		total += n
	}
	s := strings.Join(parts, "\n")
	if total <= limit && int64(len(s)) == total {
		return s
	}
	n := min(int64(len(s)), limit)
	for n > 0 && n < int64(len(s)) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf(cutMarker, n, total)
}

// maxQuoted bounds the text of another party's error that an error of a
// Server quotes: what an MCP server, its authorization server or the SDK
// quoting them said (x/oauth2 alone keeps up to 1 MiB of a token
// endpoint's error body).
const maxQuoted = 2 << 10

// quoted is the text of another party's error as an error of a Server
// quotes it: escaped as a terminal needs (internal/termtext: control
// characters and terminal escapes become visible \xNN, \u00NN) and cut to
// maxQuoted bytes, "…" ending a cut text. It is done where the error is
// made, so it holds wherever the error is printed: a terminal, a pipe, a
// log, a tool result the model reads.
func quoted(s string) string {
	e := termtext.Escape(textcut.Prefix(s, maxQuoted))
	if len(s) > maxQuoted || len(e) > maxQuoted {
		return textcut.Prefix(e, maxQuoted) + "…"
	}
	return e
}

// quoteErrors is a with each error replaced by its quoted text, scrubbed
// of the block's credentials first (a cut could leave part of one).
func (s *Server) quoteErrors(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		if err, ok := v.(error); ok {
			v = quoted(s.scrub.Replace(err.Error()))
		}
		out[i] = v
	}
	return out
}
