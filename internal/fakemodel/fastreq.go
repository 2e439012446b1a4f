package fakemodel

import (
	"bytes"

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
	ok = s.Object(func(k []byte) bool {
		switch {
		case bytes.IndexByte(k, '\\') >= 0:
			return false // escaped keys: encoding/json decides
		case string(k) == "model":
			// encoding/json would unescape or replace bad UTF-8.
			var plain bool
			model, plain = jsonscan.PlainString(s.Str())
			return plain
		case string(k) == "stream":
			switch {
			case s.Literal("true"):
				stream = true
			case s.Literal("false"):
				stream = false
			default:
				return false
			}
			return true
		case bytes.EqualFold(k, []byte("model")) || bytes.EqualFold(k, []byte("stream")):
			return false // encoding/json would match it: let it decide
		}
		return s.Value(maxDepth)
	})
	if !ok || !s.End() {
		return "", false, false
	}
	return model, stream, true
}

// maxDepth is the deepest nesting the fast path follows (encoding/json's
// own limit is far higher: deeper bodies take its path).
const maxDepth = 512
