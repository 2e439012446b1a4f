// Package jsonscan checks JSON text the way encoding/json's scanner does,
// piece by piece, for the hand-written fast paths that read the few shapes
// they know and give everything else to encoding/json (host/provider's
// stream chunks, host/config's args.NAME inputs, internal/fakemodel's
// requests). It is the one JSON scanner of the host side: a fast path
// walks objects and arrays with Object and Array and passes what it does
// not read with Value. DecodeOne is the slow path's decoding of one value
// with exact numbers.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// Scanner reads Data from I. Each method that checks a piece returns false
// (or nil) when the text there is not that piece; I is then somewhere
// inside it and the caller gives up.
type Scanner struct {
	Data []byte
	I    int
}

// WS passes white space.
func (s *Scanner) WS() {
	for s.I < len(s.Data) {
		switch s.Data[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Peek returns the next byte after white space, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.I < len(s.Data) {
		return s.Data[s.I]
	}
	return 0
}

// Next passes c if it comes next (no white space is skipped).
func (s *Scanner) Next(c byte) bool {
	if s.I < len(s.Data) && s.Data[s.I] == c {
		s.I++
		return true
	}
	return false
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.WS()
	return s.I == len(s.Data)
}

// Literal passes lit if it comes next.
func (s *Scanner) Literal(lit string) bool {
	if len(s.Data)-s.I >= len(lit) && string(s.Data[s.I:s.I+len(lit)]) == lit {
		s.I += len(lit)
		return true
	}
	return false
}

// Str passes a string after white space and returns its text with the
// quotes, or nil when it is not a valid JSON string.
func (s *Scanner) Str() []byte {
	if s.Peek() != '"' {
		return nil
	}
	start := s.I
	s.I++
	for s.I < len(s.Data) {
		c := s.Data[s.I]
		switch {
		case c == '"':
			s.I++
			return s.Data[start:s.I]
		case c < 0x20:
			return nil
		case c == '\\':
			if s.I+1 >= len(s.Data) {
				return nil
			}
			switch s.Data[s.I+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.I += 2
			case 'u':
				if s.I+6 > len(s.Data) {
					return nil
				}
				for _, h := range s.Data[s.I+2 : s.I+6] {
					if !isHex(h) {
						return nil
					}
				}
				s.I += 6
			default:
				return nil
			}
		default:
			s.I++
		}
	}
	return nil
}

// PlainString returns the text of str, a JSON string with its quotes, when
// it has no escapes, no control characters and is valid UTF-8: what
// encoding/json decodes it to without change. ok is false otherwise.
func PlainString(str []byte) (s string, ok bool) {
	if len(str) < 2 || str[0] != '"' || str[len(str)-1] != '"' {
		return "", false
	}
	b := str[1 : len(str)-1]
	if bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, '"') >= 0 || !utf8.Valid(b) {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 {
			return "", false
		}
	}
	return string(b), true
}

// Object passes an object, calling member for each of its members with
// the key's text between its quotes (escapes as they are) and the scanner
// at the value, after white space; member must pass the value, or return
// false to give up. Object returns false when the text is not an object or
// member gave up.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if s.Peek() != '{' {
		return false
	}
	s.I++
	if s.Peek() == '}' {
		s.I++
		return true
	}
	for {
		key := s.Str()
		if key == nil || s.Peek() != ':' {
			return false
		}
		s.I++
		s.WS()
		if !member(key[1 : len(key)-1]) {
			return false
		}
		switch s.Peek() {
		case ',':
			s.I++
		case '}':
			s.I++
			return true
		default:
			return false
		}
	}
}

// Array passes an array, calling elem for each element with the scanner
// at it, after white space; elem must pass it, or return false to give up.
// empty, when not nil, is called for an array without elements.
func (s *Scanner) Array(elem func() bool, empty func()) bool {
	if s.Peek() != '[' {
		return false
	}
	s.I++
	if s.Peek() == ']' {
		s.I++
		if empty != nil {
			empty()
		}
		return true
	}
	for {
		s.WS()
		if !elem() {
			return false
		}
		switch s.Peek() {
		case ',':
			s.I++
		case ']':
			s.I++
			return true
		default:
			return false
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Number passes a number of JSON's grammar.
func (s *Scanner) Number() bool {
	digits := func() int {
		n := 0
		for s.I < len(s.Data) && s.Data[s.I] >= '0' && s.Data[s.I] <= '9' {
			s.I++
			n++
		}
		return n
	}
	s.Next('-')
	if !s.Next('0') && digits() == 0 {
		return false
	}
	if s.Next('.') && digits() == 0 {
		return false
	}
	if s.Next('e') || s.Next('E') {
		if !s.Next('+') {
			s.Next('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// Value passes any JSON value, checked. It returns false when the text
// there is not one, or nests arrays and objects more than maxDepth deep
// (a fast path then leaves it to encoding/json).
func (s *Scanner) Value(maxDepth int) bool { return s.value(0, Limits{MaxDepth: maxDepth}) }

// Limits narrows what ValueWithin passes, for a fast path whose slow path
// refuses some valid JSON.
type Limits struct {
	MaxDepth int
	// Key, when set, must accept each object key (its text, quotes included).
	Key func(key []byte) bool
	// Number, when set, must accept each number (its text).
	Number func(num []byte) bool
}

// ValueWithin passes a JSON value as Value does, and returns false for one
// with a key or number that l refuses.
func (s *Scanner) ValueWithin(l Limits) bool { return s.value(0, l) }

func (s *Scanner) value(depth int, l Limits) bool {
	if depth > l.MaxDepth {
		return false
	}
	switch c := s.Peek(); {
	case c == '"':
		return s.Str() != nil
	case c == '{':
		s.I++
		if s.Peek() == '}' {
			s.I++
			return true
		}
		for {
			key := s.Str()
			if key == nil || (l.Key != nil && !l.Key(key)) || s.Peek() != ':' {
				return false
			}
			s.I++
			if !s.value(depth+1, l) {
				return false
			}
			if s.Peek() == ',' {
				s.I++
				continue
			}
			return s.Next('}')
		}
	case c == '[':
		s.I++
		if s.Peek() == ']' {
			s.I++
			return true
		}
		for {
			if !s.value(depth+1, l) {
				return false
			}
			if s.Peek() == ',' {
				s.I++
				continue
			}
			return s.Next(']')
		}
	case c == 't':
		return s.Literal("true")
	case c == 'f':
		return s.Literal("false")
	case c == 'n':
		return s.Literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.I
		return s.Number() && (l.Number == nil || l.Number(s.Data[start:s.I]))
	}
	return false
}

// ErrMore is DecodeOne's error for text that has more after its value.
var ErrMore = errors.New("more than one JSON value")

// DecodeOne decodes r, which must hold one JSON value, as encoding/json
// decodes into an any but with numbers kept exact (json.Number). It
// returns encoding/json's error, or ErrMore when more follows the value
// (Decoder.More); each caller words its own message.
func DecodeOne(r io.Reader) (any, error) {
	d := json.NewDecoder(r)
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return v, ErrMore
	}
	return v, nil
}
