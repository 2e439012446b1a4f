package config

import (
	"bytes"

	"github.com/agenthost/agenthost/internal/jsonscan"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// argsString is the fast path of EvalInput for the most common input
// expression, args.NAME: it returns the value of NAME in the call's
// arguments without building a cty object of them (two passes of
// encoding/json's decoder and about 7 KB of allocations a call) and
// without evaluating the expression. It answers only when that value is
// a JSON string of printable ASCII without escapes, the object is well
// formed, every key in it (nested ones too) is printable ASCII without
// escapes, no top-level key appears twice, and every number is one cty
// can hold: cty would make the same string of it (ASCII is unchanged by
// its NFC normalisation) and would not fail on the rest. cty's decoder
// fails on a key that NFC changes and on a number whose exponent overflows
// big.Float, so those are declined. For anything else ok is false and the
// general path decides, errors included.
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
	if sc.Peek() != '{' {
		return "", false
	}
	sc.I++
	var keys [16][]byte // the keys seen, quotes included
	var found []byte
	n := 0
	if sc.Peek() == '}' {
		return "", false // no NAME
	}
	for {
		key := sc.Str()
		if key == nil || !plainASCII(key[1:len(key)-1]) || n == len(keys) {
			return "", false
		}
		for _, k := range keys[:n] {
			if bytes.Equal(k, key) {
				return "", false
			}
		}
		keys[n] = key
		n++
		if sc.Peek() != ':' {
			return "", false
		}
		sc.I++
		if string(key[1:len(key)-1]) == attr.Name {
			v := sc.Str()
			if v == nil || !plainASCII(v[1:len(v)-1]) {
				return "", false
			}
			found = v[1 : len(v)-1]
		} else if !sc.ValueWithin(otherValues) {
			return "", false
		}
		switch sc.Peek() {
		case ',':
			sc.I++
			continue
		case '}':
			sc.I++
		default:
			return "", false
		}
		break
	}
	if found == nil || !sc.End() {
		return "", false
	}
	return string(found), true
}

// otherValues limits the values of the other arguments to what cty's
// decoder surely accepts (see argsString).
var otherValues = jsonscan.Limits{
	MaxDepth: 64,
	Key:      func(key []byte) bool { return plainASCII(key[1 : len(key)-1]) },
	Number:   modestNumber,
}

// modestNumber accepts a number of at most 1000 characters whose exponent,
// if any, has at most four digits: at most 10^11000 or so, far inside the
// range of big.Float, which cty parses numbers into.
func modestNumber(num []byte) bool {
	if len(num) > 1000 {
		return false
	}
	e := bytes.IndexAny(num, "eE")
	if e < 0 {
		return true
	}
	exp := num[e+1:]
	if exp[0] == '+' || exp[0] == '-' {
		exp = exp[1:]
	}
	return len(exp) <= 4
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
