package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/internal/jsonscan"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"golang.org/x/text/unicode/norm"
)

// argsContext is the context the tool's expressions are evaluated in:
// args bound to the call's arguments, and the functions a call may use.
func (t *CLITool) argsContext(args json.RawMessage) (*hcl.EvalContext, error) {
	argsVal, err := argsValue(args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"args": argsVal},
		Functions: callFunctions(),
	}, nil
}

// Eval evaluates the tool's argv and stdin with args bound to the call's
// arguments (a JSON object; empty or null means {}). Numbers and bools in
// argv and stdin become strings; stdin is nil when the tool has none or it
// evaluates to null. It is safe for concurrent use.
func (t *CLITool) Eval(args json.RawMessage) (argv []string, stdin []byte, err error) {
	ctx, err := t.argsContext(args)
	if err != nil {
		return nil, nil, err
	}
	if t.Argv == nil {
		return nil, nil, fmt.Errorf("tool %q: no argv", t.Name)
	}
	v, diags := t.Argv.Value(ctx)
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("tool %q: argv: %w", t.Name, diagError(diags))
	}
	if argv, err = toArgv(v); err != nil {
		return nil, nil, fmt.Errorf("tool %q: argv: %w", t.Name, err)
	}
	if t.Stdin == nil {
		return argv, nil, nil
	}
	v, diags = t.Stdin.Value(ctx)
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("tool %q: stdin: %w", t.Name, diagError(diags))
	}
	if v.IsNull() {
		return argv, nil, nil
	}
	s, err := toString(v)
	if err != nil {
		return nil, nil, fmt.Errorf("tool %q: stdin: %w", t.Name, err)
	}
	return argv, []byte(s), nil
}

// argsValue converts the call's JSON arguments to a cty object.
//
// cty keeps attribute names in Unicode's normal form C: its decoder
// panics on an object with two keys that NFC makes the same, and fails on
// a single key NFC changes. It also takes numbers it would spend hours
// writing out (modestNumber). Arguments with a key that is not plain
// ASCII have their keys normalised first (normaliseArgs), and a number
// outside a float64's range is an error: such a call works or gets an
// error that says what is wrong, and never takes the host down or holds
// it.
func argsValue(args json.RawMessage) (cty.Value, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return cty.EmptyObjectVal, nil
	}
	if trimmed[0] != '{' {
		return cty.NilVal, fmt.Errorf("arguments must be a JSON object, got %.40q", trimmed)
	}
	if !plainArgs(trimmed) {
		n, err := normaliseArgs(trimmed)
		if err != nil {
			return cty.NilVal, err
		}
		trimmed = n
	}
	ty, err := ctyjson.ImpliedType(trimmed)
	if err != nil {
		return cty.NilVal, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	v, err := ctyjson.Unmarshal(trimmed, ty)
	if err != nil {
		return cty.NilVal, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	return v, nil
}

// plainArgs reports whether args is a JSON value whose every key, at any
// depth, is printable ASCII without escapes (keys NFC leaves as they are)
// and whose every number is a modestNumber: what cty can take as it is.
func plainArgs(args []byte) bool {
	sc := jsonscan.Scanner{Data: args}
	return sc.ValueWithin(plainValues) && sc.End()
}

var plainValues = jsonscan.Limits{
	MaxDepth: 10000, // encoding/json's
	Key:      func(key []byte) bool { return plainASCII(key[1 : len(key)-1]) },
	Number:   modestNumber,
}

// normaliseArgs returns the JSON object args with every key, at any depth,
// in Unicode's normal form C, as cty keeps its attribute names. It fails
// when two keys of one object become the same, and on a number that is not
// a modestNumber.
func normaliseArgs(args []byte) ([]byte, error) {
	v, err := jsonscan.DecodeOne(bytes.NewReader(args))
	if err == jsonscan.ErrMore {
		return nil, errors.New("arguments are not valid JSON: more than one value")
	} else if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	var walk func(v any, path string) (any, error)
	walk = func(v any, path string) (any, error) {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			from := make(map[string]string, len(v))
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys) // the same error for the same arguments
			for _, k := range keys {
				nk := norm.NFC.String(k)
				if other, dup := from[nk]; dup {
					return nil, fmt.Errorf("arguments: keys %+q and %+q of %s are the same text once normalised (Unicode NFC); send one of them", other, k, path)
				}
				from[nk] = k
				e, err := walk(v[k], path+"."+nk)
				if err != nil {
					return nil, err
				}
				out[nk] = e
			}
			return out, nil
		case []any:
			for i, e := range v {
				e, err := walk(e, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				v[i] = e
			}
			return v, nil
		case json.Number:
			if !modestNumber([]byte(v)) {
				return nil, fmt.Errorf("arguments: the number %.40s at %s is out of range: tool arguments take numbers a float64 holds, from about 1e-308 to 1e308", v, path)
			}
		}
		return v, nil
	}
	if v, err = walk(v, "args"); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func toArgv(v cty.Value) ([]string, error) {
	if v.IsNull() {
		return nil, errors.New("is null; it must be a list of strings")
	}
	ty := v.Type()
	if !(ty.IsListType() || ty.IsTupleType() || ty.IsSetType()) {
		return nil, fmt.Errorf("must be a list of strings, not %s", ty.FriendlyName())
	}
	argv := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		s, err := toString(e)
		if err != nil {
			return nil, fmt.Errorf("argv[%d] %w", len(argv), err)
		}
		argv = append(argv, s)
	}
	return argv, nil
}

// toString converts a primitive value to a string; null and structured
// values are errors.
func toString(v cty.Value) (string, error) {
	switch {
	case v.IsNull():
		return "", errors.New("is null (a missing optional argument? use try(args.x, \"default\"))")
	case !v.IsWhollyKnown():
		return "", errors.New("is unknown")
	case !v.Type().IsPrimitiveType():
		return "", fmt.Errorf("is %s, not a string; use jsonencode(...) for structured values", v.Type().FriendlyName())
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", fmt.Errorf("cannot be a string: %w", err)
	}
	return s.AsString(), nil
}

// diagError turns HCL diagnostics into a compact error: "summary: detail"
// of each error, without file positions (the call site is not the config).
func diagError(diags hcl.Diagnostics) error {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("%s (line %d)", msg, d.Subject.Start.Line)
		}
		parts = append(parts, msg)
	}
	return errors.New(strings.Join(parts, "; "))
}
