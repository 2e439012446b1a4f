package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestArgsCtyRefuses: valid JSON arguments that cty's decoder refuses as
// they are (a key NFC changes, at the top or nested) reach the tool with
// their keys normalised; what cannot be mended gets an error that says what
// is wrong, not that the JSON is invalid.
func TestArgsCtyRefuses(t *testing.T) {
	for _, c := range []struct{ expr, args, want, err string }{
		{expr: `args["café"]`, args: `{"cafe\u0301":"decomposed"}`, want: "decomposed"},
		{expr: `args["ι"]`, args: "{\"\u1fbe\":\"prosgegrammeni\"}", want: "prosgegrammeni"},
		{expr: `args.text`, args: `{"a":{"b":[{"\u1fbe":1}]},"text":"nested"}`, want: "nested"},
		{expr: `args.text`, args: `{"a":1e300,"b":"\u1fbe","text":"values kept"}`, want: "values kept"},
		{expr: `args.text`, args: `{"a":1e400,"text":"x"}`, err: `the number 1e400 at args.a is out of range`},
		// written out in full, 1e-200000 took 11 s of CPU, before the plugin's timeout applies
		{expr: `args.n`, args: `{"n":1e-20000}`, err: `the number 1e-20000 at args.n is out of range`},
		{expr: `args.n`, args: `{"n":0e-20000}`, want: "0"},
		{expr: `args.text`, args: `{"a":{"cafe\u0301":1,"café":2},"text":"x"}`,
			err: `keys "cafe\u0301" and "caf\u00e9" of args.a are the same text once normalised`},
		{expr: `args.text`, args: `{"a":[1e999999999999],"text":"x"}`,
			err: `the number 1e999999999999 at args.a[0] is out of range`},
	} {
		tool := inputTool(t, c.expr)
		_, got, err := tool.evalInput([]byte(c.args))
		// a wasi_cli tool's argv and stdin take the same way
		tool.Stdin = tool.Input
		argvExpr, diags := hclsyntax.ParseExpression([]byte("["+c.expr+"]"), "argv.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		tool.Argv = argvExpr
		argv, stdin, cerr := tool.Eval([]byte(c.args))
		if (cerr == nil) != (err == nil) || err == nil && (len(argv) != 1 || argv[0] != string(got) || string(stdin) != string(got)) {
			t.Errorf("%s of %s as a wasi_cli tool: argv %q, stdin %q, %v; as Extism input %q, %v", c.expr, c.args, argv, stdin, cerr, got, err)
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s of %s: %q, %v; want an error with %q", c.expr, c.args, got, err, c.err)
			}
		case err != nil || string(got) != c.want:
			t.Errorf("%s of %s: %q, %v; want %q", c.expr, c.args, got, err, c.want)
		}
	}
}
