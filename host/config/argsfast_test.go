package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// inputTool is an Extism tool whose input is the expression src.
func inputTool(t testing.TB, src string) *CLITool {
	t.Helper()
	expr, diags := hclsyntax.ParseExpression([]byte(src), "input.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return &CLITool{Name: "t", Input: expr}
}

// sameAsGeneral fails when argsString answers for args and its answer is
// not the general path's; it reports whether argsString answered.
func sameAsGeneral(t testing.TB, tool *CLITool, args string) bool {
	t.Helper()
	fast, ok := argsString(tool.Input, []byte(args))
	if !ok {
		return false
	}
	_, in, err := tool.evalInput(json.RawMessage(args))
	if err != nil || string(in) != fast {
		t.Fatalf("input %s of %s: fast path %q, general path %q, %v", exprText(tool), args, fast, in, err)
	}
	return true
}

func exprText(tool *CLITool) string {
	r := tool.Input.Range()
	return r.String()
}

var argsCorpus = []string{
	`{"text":"hello"}`,
	` { "text" : "step 12" , "n": 3 } `,
	`{"a":{"b":[1,2,{"text":"inner"}]},"text":"outer","c":null,"d":true,"e":false,"f":-1.5e3}`,
	`{"text":""}`,
	`{"text":"a\nb"}`,
	`{"text":"caf\u00e9"}`,
	`{"text":"café"}`,
	`{"text":"e\u0301"}`,
	`{"text":"tab	in"}`,
	`{"text":1}`,
	`{"text":true}`,
	`{"text":null}`,
	`{"text":["x"]}`,
	`{"text":"x","text":"y"}`,
	`{"text":"x","a":1,"a":"s"}`,
	`{"te\u0078t":"x"}`,
	`{"Text":"x"}`,
	"{\"\u1fbe\":[],\"text\":\"\"}", // a key NFC changes: cty's decoder then finds no such attribute
	`{"café":1,"text":"x"}`,
	`{"a":{"\u1fbe":1},"text":"x"}`,
	"{\"a\":[{\"\u1fbe\":1}],\"text\":\"x\"}",
	`{"a":1e999999999999,"text":"x"}`,
	`{"a":-1e-300,"b":[2E+12, 0e-99999, -0.0],"text":"ok"}`,
	`{"a":-1e-9999,"text":"tiny"}`,
	`{"a":[1e-22222777],"text":"tinier"}`,
	`{"text":722E22222777}`,
	`{"a":{"b":1,"b":2},"text":"nested twice"}`,
	`{}`,
	`[]`,
	`{"text":"x"} {"text":"y"}`,
	`{"text":"x"`,
	`{"text":"x",}`,
	`{"text" "x"}`,
	`{"a":01,"text":"x"}`,
	`{"a":[1,2,],"text":"x"}`,
	`{"text":"x\u007f"}`,
	`{"text":"` + strings.Repeat("y", 5000) + `"}`,
	`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"text":"deep"}`,
}

// TestArgsStringMatchesGeneral: for args.text, the fast path answers for
// plain strings and gives what the general path gives; it declines the rest.
func TestArgsStringMatchesGeneral(t *testing.T) {
	tool := inputTool(t, "args.text")
	want := map[string]bool{
		`{"text":"hello"}`:                  true,
		` { "text" : "step 12" , "n": 3 } `: true,
		`{"a":{"b":[1,2,{"text":"inner"}]},"text":"outer","c":null,"d":true,"e":false,"f":-1.5e3}`: true,
		`{"text":""}`: true,
		`{"a":-1e-300,"b":[2E+12, 0e-99999, -0.0],"text":"ok"}`:                           true,
		`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"text":"deep"}`: true,
		`{"a":{"b":1,"b":2},"text":"nested twice"}`:                                       true,
		`{"text":"` + strings.Repeat("y", 5000) + `"}`:                                    true,
	}
	for _, args := range argsCorpus {
		if got := sameAsGeneral(t, tool, args); got != want[args] {
			t.Errorf("fast path answered %v for %.60s, want %v", got, args, want[args])
		}
	}
	for _, src := range []string{`args["text"]`, `upper(args.text)`, `args.text.x`, `"${args.text}"`, `var.text`} {
		if _, ok := argsString(inputTool(t, src).Input, []byte(`{"text":"hello"}`)); ok {
			t.Errorf("fast path answered for input = %s", src)
		}
	}
}

// FuzzArgsString: whenever the fast path answers, the general path agrees;
// the general path never panics, whatever the arguments.
func FuzzArgsString(f *testing.F) {
	for _, a := range argsCorpus {
		f.Add(a)
	}
	f.Add(`{"a":{"cafe\u0301":1,"café":2},"text":"x"}`)
	tool := inputTool(f, "args.text")
	f.Fuzz(func(t *testing.T, args string) {
		if !sameAsGeneral(t, tool, args) {
			tool.evalInput(json.RawMessage(args))
		}
	})
}
