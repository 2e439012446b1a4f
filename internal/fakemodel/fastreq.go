package fakemodel

import (
	"bytes"
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/jsonscan"
)

// readRequest reads the two fields chat needs from a request body: the
// model and the stream flag. ok is false when the fast path below gives up
// (not JSON, a shape it does not read, a key that only matches a field
// case-insensitively, a value of another type); chat then decodes with
// encoding/json, whose result and error are the contract.
//
// The fast path exists for the benchmarks: a long history makes every body
// large, and decoding all of it with encoding/json, on the path of every
// answer, would put the fake's own time into every measured step, where the
// server is meant to answer at once.
func readRequest(body []byte) (model string, stream, ok bool) {
	s := jsonscan.Scanner{Data: body}
	if s.Peek() != '{' {
		return "", false, false
	}
	s.I++
	if s.Peek() == '}' {
		s.I++
		return "", false, s.End()
	}
	for {
		key := s.Str()
		if key == nil || bytes.IndexByte(key, '\\') >= 0 {
			return "", false, false // escaped keys: encoding/json decides
		}
		if s.Peek() != ':' {
			return "", false, false
		}
		s.I++
		s.WS()
		k := key[1 : len(key)-1]
		switch {
		case string(k) == "model":
			v := s.Str()
			if v == nil || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				return "", false, false // encoding/json would unescape or replace bad UTF-8
			}
			model = string(v[1 : len(v)-1])
		case string(k) == "stream":
			switch {
			case s.Literal("true"):
				stream = true
			case s.Literal("false"):
				stream = false
			default:
				return "", false, false
			}
		case bytes.EqualFold(k, []byte("model")) || bytes.EqualFold(k, []byte("stream")):
			return "", false, false // encoding/json would match it: let it decide
		default:
			if !s.Value(maxDepth) {
				return "", false, false
			}
		}
		switch s.Peek() {
		case ',':
			s.I++
			continue
		case '}':
			s.I++
			return model, stream, s.End()
		}
		return "", false, false
	}
}

// maxDepth is the deepest nesting the fast path follows (encoding/json's
// own limit is far higher: deeper bodies take its path).
const maxDepth = 512
