package fakemodel

import (
	"bytes"
	"unicode/utf8"
)

// readRequest reads the two fields chat needs from a request body: the
// model and the stream flag. ok is false when the fast path below gives up
// (not JSON, a shape it does not read, a key that only matches a field
// case-insensitively, a value of another type); chat then decodes with
// encoding/json, whose result and error are the contract.
//
// The fast path exists for the benchmarks: with a 200-step history the body
// is ~50 KB, and encoding/json spent ~250 µs checking and decoding it, on
// the path of every answer, where the server is meant to answer at once.
func readRequest(body []byte) (model string, stream, ok bool) {
	s := reqScanner{b: body}
	s.ws()
	if !s.next('{') {
		return "", false, false
	}
	s.ws()
	if s.next('}') {
		return "", false, s.end()
	}
	for {
		s.ws()
		key, plain := s.str()
		if key == nil || !plain {
			return "", false, false
		}
		s.ws()
		if !s.next(':') {
			return "", false, false
		}
		s.ws()
		k := key[1 : len(key)-1]
		switch {
		case string(k) == "model":
			v, plain := s.str()
			if v == nil || !plain || !utf8.Valid(v) {
				return "", false, false // encoding/json would replace bad UTF-8
			}
			model = string(v[1 : len(v)-1])
		case string(k) == "stream":
			switch {
			case s.lit("true"):
				stream = true
			case s.lit("false"):
				stream = false
			default:
				return "", false, false
			}
		case bytes.EqualFold(k, []byte("model")) || bytes.EqualFold(k, []byte("stream")):
			return "", false, false // encoding/json would match it: let it decide
		default:
			if !s.value(0) {
				return "", false, false
			}
		}
		s.ws()
		if s.next(',') {
			continue
		}
		if s.next('}') {
			return model, stream, s.end()
		}
		return "", false, false
	}
}

// reqScanner checks JSON text the way encoding/json's scanner does, for
// what readRequest skips.
type reqScanner struct {
	b []byte
	i int
}

// maxDepth is the deepest nesting the fast path follows (encoding/json's
// own limit is far higher: deeper bodies take its path).
const maxDepth = 512

func (s *reqScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *reqScanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *reqScanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

func (s *reqScanner) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// str passes a string and returns it with its quotes (nil when the next
// value is not a valid string) and whether it holds no escape.
func (s *reqScanner) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start, plain := s.i-1, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], plain
		case c < 0x20:
			return nil, false
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return nil, false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, false
					}
				}
				s.i += 5
			default:
				return nil, false
			}
		default:
			s.i++
		}
	}
	return nil, false
}

func (s *reqScanner) digits() bool {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n > 0
}

func (s *reqScanner) number() bool {
	s.next('-')
	switch {
	case s.next('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.next('.') && !s.digits() {
		return false
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// value passes any JSON value.
func (s *reqScanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, _ := s.str()
		return v != nil
	case c == '{':
		s.i++
		s.ws()
		if s.next('}') {
			return true
		}
		for {
			s.ws()
			if k, _ := s.str(); k == nil {
				return false
			}
			s.ws()
			if !s.next(':') {
				return false
			}
			s.ws()
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.next(',') {
				continue
			}
			return s.next('}')
		}
	case c == '[':
		s.i++
		s.ws()
		if s.next(']') {
			return true
		}
		for {
			s.ws()
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.next(',') {
				continue
			}
			return s.next(']')
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	default:
		return s.number()
	}
}
