// Package jqfilter filters JSON with a jq expression, as gh's --jq does:
// each result of the expression on a line of its own, a string as its
// text and anything else as compact JSON. The jq language is gojq's.
package jqfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/itchyny/gojq"
)

// Filter is a compiled jq expression.
type Filter struct{ code *gojq.Code }

// Compile parses and compiles expr.
func Compile(expr string) (*Filter, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return &Filter{code: code}, nil
}

// Apply runs the filter on each JSON value of in, one after the other,
// and writes the results to w. A halt without a value ends it quietly;
// the expression's error (or in's, when it is not JSON) is returned.
func (f *Filter) Apply(w io.Writer, in io.Reader) error {
	dec := json.NewDecoder(in)
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("the command's output is not JSON: %v", err)
		}
		iter := f.code.Run(value(v))
		for {
			r, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := r.(error); ok {
				var halt *gojq.HaltError
				if errors.As(err, &halt) && halt.Value() == nil {
					return nil
				}
				return err
			}
			if s, ok := r.(string); ok {
				fmt.Fprintln(w, s)
				continue
			}
			b, err := gojq.Marshal(r)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
		}
	}
}

// value turns decoded JSON into the values gojq takes: a json.Number
// becomes an int, a *big.Int or a float64.
func value(v any) any {
	switch v := v.(type) {
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			if i, err := v.Int64(); err == nil && int64(int(i)) == i {
				return int(i)
			}
			if b, ok := new(big.Int).SetString(string(v), 10); ok {
				return b
			}
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = value(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = value(v[k])
		}
	}
	return v
}
