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
// formed, has no key with escapes and no key twice: cty would make the
// same string of it (ASCII is unchanged by its NFC normalisation). For
// anything else ok is false and the general path decides, errors included.
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
		if key == nil || bytes.IndexByte(key, '\\') >= 0 || n == len(keys) {
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
			if v == nil {
				return "", false
			}
			for _, c := range v[1 : len(v)-1] {
				if c < 0x20 || c > 0x7e || c == '\\' {
					return "", false
				}
			}
			found = v[1 : len(v)-1]
		} else if !sc.Value(64) {
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
