package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
)

// --jq EXPR, declared with --json by every command that prints JSON
// (jsonFlag), filters that JSON as gh's --jq does: the command runs as
// with --json, its output is kept, and each result of the expression is
// printed on a line of its own, a string as its text and anything else as
// compact JSON. An expression that does not compile is a usage error
// before the command runs; one that fails on the output, an error (exit 1)
// after it.

// jqFlag is the name of the flag.
const jqFlag = "jq"

// startJQ, for a command given --jq, compiles the expression, sets --json
// and sends the command's stdout to a buffer; done filters what the
// command printed onto the real stdout and returns the exit code. With no
// --jq, done is nil.
func (c *cli) startJQ(cmd *cobra.Command) (done func(code int) int, usage error) {
	f := cmd.Flags().Lookup(jqFlag)
	if f == nil || f.Value.String() == "" {
		return nil, nil
	}
	q, err := gojq.Parse(f.Value.String())
	if err != nil {
		return nil, fmt.Errorf("--jq: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("--jq: %v", err)
	}
	if err := cmd.Flags().Set("json", "true"); err != nil {
		return nil, fmt.Errorf("--jq goes with --json: %v", err)
	}
	out := c.e.stdout
	var buf bytes.Buffer
	c.e.stdout = &buf
	return func(exit int) int {
		c.e.stdout = out
		if err := filterJQ(out, &buf, code); err != nil {
			fmt.Fprintf(c.e.stderr, "agenthost: --jq: %v\n", err)
			if exit == exitOK {
				return exitError
			}
		}
		return exit
	}, nil
}

// filterJQ runs code on each JSON value of in and writes its results.
func filterJQ(w io.Writer, in io.Reader, code *gojq.Code) error {
	dec := json.NewDecoder(in)
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("the command's output is not JSON: %v", err)
		}
		iter := code.Run(jqValue(v))
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

// jqValue turns decoded JSON into the values gojq takes: a json.Number
// becomes an int, a *big.Int or a float64.
func jqValue(v any) any {
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
			v[i] = jqValue(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = jqValue(v[k])
		}
	}
	return v
}
