package config

import (
	"bytes"
	"strconv"

	"github.com/agenthost/agenthost/internal/jsonscan"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// argsString is the fast path of EvalInput for the most common input
// expression, args.NAME: it returns the value of NAME in the call's
// arguments without building a cty object of them (two passes of
// encoding/json's decoder and an allocation per value, on every call) and
// without evaluating the expression. It answers only when that value is
// a JSON string of printable ASCII without escapes, the object is well
// formed, no top-level key appears twice, and the rest is what the general
// path takes as it is (plainArgs: keys of plain ASCII at any depth, modest
// numbers): cty would make the same string of it, as ASCII is unchanged
// by its NFC normalisation. For anything else ok is false and the general
// path decides, errors included.
func argsString(expr hcl.Expression, args []byte) (s string, ok bool) {
	e, isTraversal := expr.(*hclsyntax.ScopeTraversalExpr)
	if !isTraversal || len(e.Traversal) != 2 {
		return "", false
	}
	root, isRoot := e.Traversal[0].(hcl.TraverseRoot)
	attr, isAttr := e.Traversal[1].(hcl.TraverseAttr)
	if !isRoot || !isAttr || root.Name != "args" {
		return "", false
	}
	sc := jsonscan.Scanner{Data: args}
	var keys [16][]byte // the keys seen
	var found []byte
	n := 0
	ok = sc.Object(func(key []byte) bool {
		if !plainASCII(key) || n == len(keys) {
			return false
		}
		for _, k := range keys[:n] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		keys[n] = key
		n++
		if string(key) != attr.Name {
			return sc.ValueWithin(plainValues)
		}
		v := sc.Str()
		if v == nil || !plainASCII(v[1:len(v)-1]) {
			return false
		}
		found = v[1 : len(v)-1]
		return true
	})
	if !ok {
		return "", false
	}
	if found == nil || !sc.End() {
		return "", false
	}
	return string(found), true
}

// modestNumber accepts a number of at most 1000 characters that a float64
// holds without overflowing or underflowing to zero. cty keeps numbers as
// big.Float and writes them out in full ('f' format): a number like
// 1e-200000 took 11 s of the host's CPU to become a string, 1e-22222777
// would take hours, and the time goes before the plugin starts, out of
// reach of its timeout. Within float64's range a number is at most a few
// hundred digits long. (encoding/json, which the loop checks arguments
// with, already refuses the overflowing ones.)
func modestNumber(num []byte) bool {
	if len(num) > 1000 {
		return false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return false
	}
	if f != 0 {
		return true
	}
	for _, c := range num { // zero written as zero, not a tiny number
		switch {
		case c == 'e' || c == 'E':
			return true
		case c >= '1' && c <= '9':
			return false
		}
	}
	return true
}

// plainASCII reports whether b is printable ASCII without backslashes: the
// contents of a JSON string that decodes to itself and that NFC keeps.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}
