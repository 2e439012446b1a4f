package main

import (
	"unicode/utf8"
	"unsafe"
)

// Hand-written JSON for the fixed shapes of a call: the request envelope,
// the tools' flat argument objects and the result. In the guest (Go
// compiled to wasm) decoding by reflection is slow, and every call pays for
// it. The decoders are a fast path only: they accept a subset of JSON
// (exact key names, no null, plain integers, strings whose escapes are the
// one-letter kinds, valid UTF-8) and say no to anything else, which then
// goes to the general decoder (jsondec.go), so results and error messages
// are those of encoding/json. fastjson_test.go checks both against it.

// jscan is a cursor over a JSON text.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string at the cursor and returns its value. ok is false when
// it is not a string of the accepted subset. A value without escapes is a
// slice of the input.
func (s *jscan) str() (v []byte, ok bool) {
	if s.peek() != '"' {
		return nil, false
	}
	s.i++
	start := s.i
	var out []byte // nil until the first escape
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			seg := s.b[start:s.i]
			s.i++
			if out == nil {
				return seg, true
			}
			return append(out, seg...), true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			var r byte
			switch s.b[s.i+1] {
			case '"', '\\', '/':
				r = s.b[s.i+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u escapes go to encoding/json
				return nil, false
			}
			out = append(append(out, s.b[start:s.i]...), r)
			s.i += 2
			start = s.i
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false // encoding/json would replace it
			}
			s.i += n
		default:
			s.i++
		}
	}
	return nil, false
}

// value skips one JSON value of any kind, checking it, and returns it. ok is
// false when it is not valid JSON (or nests deeper than the fast path goes).
func (s *jscan) value(depth int) (v []byte, ok bool) {
	if depth > 64 {
		return nil, false
	}
	c := s.peek()
	start := s.i
	switch {
	case c == '"':
		if _, ok := s.str(); !ok {
			return nil, false
		}
	case c == '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			break
		}
		for {
			if _, ok := s.str(); !ok || s.peek() != ':' {
				return nil, false
			}
			s.i++
			if _, ok := s.value(depth + 1); !ok {
				return nil, false
			}
			next := s.peek()
			s.i++
			if next == '}' {
				break
			}
			if next != ',' {
				return nil, false
			}
		}
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			break
		}
		for {
			if _, ok := s.value(depth + 1); !ok {
				return nil, false
			}
			next := s.peek()
			s.i++
			if next == ']' {
				break
			}
			if next != ',' {
				return nil, false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		if !s.number() {
			return nil, false
		}
	default:
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *jscan) lit(w string) ([]byte, bool) {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return nil, false
	}
	s.i += len(w)
	return s.b[s.i-len(w) : s.i], true
}

// number skips a number by JSON's grammar.
func (s *jscan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	s.i = i
	return true
}

// int reads a plain integer (no fraction or exponent, at most 18 digits).
func (s *jscan) int() (int, bool) {
	s.ws()
	start := s.i
	if !s.number() {
		return 0, false
	}
	b := s.b[start:s.i]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func (s *jscan) bool() (v, ok bool) {
	switch s.peek() {
	case 't':
		_, ok = s.lit("true")
		return true, ok
	case 'f':
		_, ok = s.lit("false")
		return false, ok
	}
	return false, false
}

// end reports whether only white space is left.
func (s *jscan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// fastRequest decodes a request envelope; ok false sends it to
// encoding/json. Arguments is a slice of data.
func fastRequest(data []byte) (req request, ok bool) {
	s := jscan{b: data}
	if !s.object(func(key []byte) bool {
		switch string(key) {
		case "tool", "call_id":
			v, ok := s.str()
			if !ok {
				return false
			}
			if string(key) == "tool" {
				req.Tool = string(v)
			} else {
				req.CallID = string(v)
			}
		case "arguments":
			v, ok := s.value(0)
			if !ok {
				return false
			}
			req.Arguments = v
		default:
			return false
		}
		return true
	}) || !s.end() {
		return request{}, false
	}
	return req, true
}

// object reads an object at the cursor, calling field with each key (the
// cursor then at its value), which reads the value and returns false to
// give up.
func (s *jscan) object(field func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		k, ok := s.str()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(k) {
			return false
		}
		switch s.peek() {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
		default:
			return false
		}
	}
}

// fastArgs decodes a tool's arguments (an object, after decodeArgs has
// trimmed them) into v, one of the tools' argument structs, which it leaves
// as it was when it returns false (the arguments then go to encoding/json).
func fastArgs(raw []byte, v any) bool {
	s := jscan{b: raw}
	switch a := v.(type) {
	case *readFileArgs:
		return objectInto(&s, a, func(t *readFileArgs, k []byte) bool {
			switch string(k) {
			case "path":
				return s.string(&t.Path)
			case "offset":
				return s.intTo(&t.Offset)
			case "limit":
				return s.intTo(&t.Limit)
			}
			return false
		})
	case *writeFileArgs:
		return objectInto(&s, a, func(t *writeFileArgs, k []byte) bool {
			switch string(k) {
			case "path":
				return s.string(&t.Path)
			case "content":
				return s.stringPtr(&t.Content)
			}
			return false
		})
	case *listDirArgs:
		return objectInto(&s, a, func(t *listDirArgs, k []byte) bool {
			switch string(k) {
			case "path":
				return s.string(&t.Path)
			case "recursive":
				return s.boolTo(&t.Recursive)
			}
			return false
		})
	case *searchArgs:
		return objectInto(&s, a, func(t *searchArgs, k []byte) bool {
			switch string(k) {
			case "pattern":
				return s.string(&t.Pattern)
			case "path":
				return s.string(&t.Path)
			case "regexp":
				return s.boolTo(&t.Regexp)
			case "case_insensitive":
				return s.boolTo(&t.CaseInsensitive)
			case "max_results":
				return s.intTo(&t.MaxResults)
			}
			return false
		})
	case *editArgs:
		return objectInto(&s, a, func(t *editArgs, k []byte) bool {
			switch string(k) {
			case "path":
				return s.string(&t.Path)
			case "old_string":
				return s.string(&t.OldString)
			case "new_string":
				return s.stringPtr(&t.NewString)
			}
			return false
		})
	}
	return false
}

// objectInto reads the whole of s as one object whose members field
// reads into a fresh T, and sets *a only when all of it was read.
func objectInto[T any](s *jscan, a *T, field func(t *T, k []byte) bool) bool {
	var t T
	if !s.object(func(k []byte) bool { return field(&t, k) }) || !s.end() {
		return false
	}
	*a = t
	return true
}

func (s *jscan) string(dst *string) bool {
	v, ok := s.str()
	*dst = string(v)
	return ok
}

func (s *jscan) stringPtr(dst **string) bool {
	v, ok := s.str()
	str := string(v)
	*dst = &str
	return ok
}

func (s *jscan) intTo(dst *int) bool {
	n, ok := s.int()
	*dst = n
	return ok
}

func (s *jscan) boolTo(dst *bool) bool {
	b, ok := s.bool()
	*dst = b
	return ok
}

// appendResult appends the result document as encoding/json's Encoder with
// SetEscapeHTML(false) writes it, final newline included.
func appendResult(b []byte, text string, isError bool) []byte {
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = appendString(b, text)
	if isError {
		return append(b, "}],\"is_error\":true}\n"...)
	}
	return append(b, "}],\"is_error\":false}\n"...)
}

const (
	ones8 = 0x0101010101010101
	high8 = 0x8080808080808080
)

// plain8 reports whether none of the 8 bytes of w needs escaping in a JSON
// string: no control byte, '"', '\\' or non-ASCII byte. (Each test is exact
// about whether some byte matches, which is all that is asked.)
func plain8(w uint64) bool {
	ctl := (w - ones8*0x20) &^ w & high8
	quo := (w ^ ones8*'"' - ones8) &^ (w ^ ones8*'"') & high8
	bsl := (w ^ ones8*'\\' - ones8) &^ (w ^ ones8*'\\') & high8
	return w&high8|ctl|quo|bsl == 0
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json writes it
// without HTML escaping: invalid UTF-8 becomes \ufffd, U+2028 and U+2029
// are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	sb := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	start, i := 0, 0
	for i < len(s) {
		if len(s)-i >= 8 && plain8(le64(sb[i:])) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
