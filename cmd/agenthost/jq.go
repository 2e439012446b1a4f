package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/internal/jqfilter"
)

// --jq EXPR, declared with --json by every command that prints JSON
// (jsonFlag), filters that JSON as gh's --jq does (internal/jqfilter):
// the command runs as with --json, its output is kept, and the results of
// the expression are printed at its end. An expression that does not
// compile is a usage error before the command runs; one that fails on the
// output, an error (exit 1) after it.

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
	filter, err := jqfilter.Compile(f.Value.String())
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
		if err := filter.Apply(out, &buf); err != nil {
			fmt.Fprintf(c.e.stderr, "agenthost: --jq: %v\n", err)
			if exit == exitOK {
				return exitError
			}
		}
		return exit
	}, nil
}
