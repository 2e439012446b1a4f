package component

import (
	"encoding/json"
	"errors"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestABIEcho sends every value type through testdata/abi.wasm (written by
// hand in the text format): echo-all takes more than 16 flat parameters,
// so they arrive in memory, and returns a tuple of more than one flat
// value, so it leaves in memory; the others keep to flat values.
func TestABIEcho(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	cases := []struct{ tool, args, want string }{
		{"echo-all",
			`{"b":true,"i8":-128,"u8":255,"i16":-32768,"u16":65535,"i32":-2147483648,"u32":4294967295,
			  "i64":-9223372036854775808,"u64":18446744073709551615,"f32":1.5,"f64":-0.25,"c":"€","s":"str",
			  "bytes":[0,1,255],"words":["a","bc"],"p":{"x":1,"y":2,"label":"L"},"points":[{"x":3,"y":4,"label":null}],
			  "shape":{"tag":"circle","val":2.5},"color":"blue","perms":["exec","a8"],"o":7,"r":{"err":9},"t":["x",0.5,-1]}`,
			`{"result":[true,-128,255,-32768,65535,-2147483648,4294967295,-9223372036854775808,18446744073709551615,1.5,-0.25,"€","str",[0,1,255],["a","bc"],{"x":1,"y":2,"label":"L"},[{"x":3,"y":4,"label":null}],{"tag":"circle","val":2.5},"blue",["exec","a8"],7,{"err":9},["x",0.5,-1]]}`},
		// A missing option field is none; flags as an object of booleans.
		{"echo-all",
			`{"b":false,"i8":0,"u8":0,"i16":0,"u16":0,"i32":0,"u32":0,"i64":0,"u64":0,"f32":"NaN","f64":"-inf","c":"a","s":"",
			  "bytes":[],"words":[],"p":{"x":0,"y":0},"points":[],"shape":{"tag":"none"},"color":"red","perms":{"read":true,"write":false},
			  "o":null,"r":{"ok":"fine"},"t":["b",1e3,2e0]}`,
			`{"result":[false,0,0,0,0,0,0,0,0,"NaN","-inf","a","",[],[],{"x":0,"y":0,"label":null},[],{"tag":"none"},"red",["read"],null,{"ok":"fine"},["b",1000,2]]}`},
		{"echo-string", `{"s":"héllo \"wörld\"\n\u0001"}`, `{"result":"héllo \"wörld\"\n\u0001"}`},
		{"echo-utf16", `{"s":"héllo 😀 wörld"}`, `{"result":"héllo 😀 wörld"}`},
		{"echo-compact", `{"s":"héllo wörld"}`, `{"result":"héllo wörld"}`},
		{"echo-compact", `{"s":"héllo 😀"}`, `{"result":"héllo 😀"}`},
		{"add", `{"a":4294967295,"b":2}`, `{"result":1}`},
		{"next-char", `{"c":"z"}`, `{"result":"{"}`},
		{"flip-flags", `{"f":["read","a8"]}`, `{"result":["write","exec","a3","a4","a5","a6","a7"]}`},
		// The payloads share an i64: an f32 travels in its low bits.
		{"echo-variant", `{"v":{"tag":"f","val":1.5}}`, `{"result":{"tag":"f","val":1.5}}`},
		{"echo-variant", `{"v":{"tag":"i","val":-9007199254740993}}`, `{"result":{"tag":"i","val":-9007199254740993}}`},
		{"echo-variant", `{"v":{"tag":"n"}}`, `{"result":{"tag":"n"}}`},
		{"nothing", `{}`, `null`},
	}
	for _, c := range cases {
		out := mustCall(t, k, c.tool, c.args, nil)
		if string(out.JSON) != c.want || out.IsError {
			t.Errorf("%s(%s)\n got %s (error %v)\nwant %s", c.tool, c.args, out.JSON, out.IsError, c.want)
		}
	}
}

// TestABIResultErr: result::err is an error result, its JSON as Wassette
// shows it.
func TestABIResultErr(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	out := mustCall(t, k, "fail", `{"why":"no such thing"}`, nil)
	if !out.IsError || string(out.JSON) != `{"result":{"err":"no such thing"}}` {
		t.Fatalf("fail = %s, error %v", out.JSON, out.IsError)
	}
}

// TestABITraps: a guest that breaks the canonical ABI's rules in what it
// returns traps; the host neither panics nor reads outside the memory.
func TestABITraps(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	cases := []struct{ tool, args, msg string }{
		{"next-char", `{"c":"\ud7ff"}`, "0xd800 is not a Unicode scalar value"},
		{"bad-pointer", `{}`, "out of bounds"},
		{"bad-utf8", `{}`, "not valid UTF-8"},
		{"bad-enum", `{}`, "case 7 of enum"},
		{"huge-list", `{}`, "list of 268435456 elements at 8 is out of bounds"},
		{"misaligned", `{}`, "pointer 3 is not aligned to 8"},
	}
	for _, c := range cases {
		_, err := callTool(t, k, c.tool, c.args, nil)
		f := failure(t, err, sandbox.FailureTrap)
		if !strings.Contains(f.Err.Error(), c.msg) {
			t.Errorf("%s: %v, want it to say %q", c.tool, f.Err, c.msg)
		}
	}
}

// TestArguments: arguments that do not fit the parameters are refused
// before the guest runs, with a message naming the place.
func TestArguments(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	cases := []struct{ tool, args, msg string }{
		{"add", `{"a":1}`, `missing argument "b" (u32)`},
		{"add", `{"a":-1,"b":0}`, "a: -1 is out of the range of u32"},
		{"add", `{"a":1.5,"b":0}`, "a: u32 needs a whole number, not 1.5"},
		{"add", `{"a":"1","b":0}`, "a: u32 needs a number, not a string"},
		{"add", `[1,2]`, "arguments must be a JSON object, not an array"},
		{"add", `{"a":1,"b":2} x`, "data after the JSON object"},
		{"add", `{"a":1,`, "not JSON"},
		{"next-char", `{"c":"ab"}`, "c: char needs a string of exactly one character"},
		{"flip-flags", `{"f":["read","fly"]}`, `f: fly is not a flag of`},
		{"echo-variant", `{"v":{"tag":"x"}}`, `v: "x" is not a case of`},
		{"echo-variant", `{"v":{"tag":"f"}}`, `v: case "f" needs its payload in "val"`},
		{"fail", `{"why":7}`, "why: string needs a string, not a number"},
		{"add", `{"a":1e400,"b":0}`, "out of the range"},
	}
	for _, c := range cases {
		_, err := callTool(t, k, c.tool, c.args, nil)
		var ae *ArgumentError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s(%s) = %v, want an ArgumentError saying %q", c.tool, c.args, err, c.msg)
		}
	}
	if _, err := callTool(t, k, "no-such-tool", `{}`, nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestResultLimit: a result whose JSON exceeds Sandbox.MaxResult fails the
// call instead of growing without bound.
func TestResultLimit(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	big := `{"s":"` + strings.Repeat("x", 2000) + `"}`
	_, err := callTool(t, k, "echo-string", big, &Sandbox{MaxResult: 1000})
	failure(t, err, sandbox.FailureResult)
	if out := mustCall(t, k, "echo-string", big, &Sandbox{MaxResult: 3000}); len(out.JSON) < 2000 {
		t.Fatalf("echo-string = %d bytes", len(out.JSON))
	}
}

// TestTools: names, descriptions and schemas as Wassette's component2json
// makes them.
func TestTools(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	var add Tool
	for _, tl := range k.Tools() {
		if tl.Name == "add" {
			add = tl
		}
	}
	if add.Description != "Adds two numbers, wrapping." {
		t.Errorf("description of add = %q, want its package-docs", add.Description)
	}
	if d := k.Func("nothing").Tool().Description; d != "Does nothing." {
		t.Errorf("description of nothing = %q, want its package-docs", d)
	}
	if d := k.Func("next-char").Tool().Description; d != "Auto-generated schema for function 'next-char'" {
		t.Errorf("description without docs = %q", d)
	}
	var in, out any
	json.Unmarshal(add.InputSchema, &in)
	json.Unmarshal(add.OutputSchema, &out)
	wantIn := map[string]any{"type": "object", "required": []any{"a", "b"},
		"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}}
	if d := cmp.Diff(wantIn, in); d != "" {
		t.Errorf("input schema (-want +got):\n%s", d)
	}
	wantOut := map[string]any{"type": "object", "required": []any{"result"},
		"properties": map[string]any{"result": map[string]any{"type": "number"}}}
	if d := cmp.Diff(wantOut, out); d != "" {
		t.Errorf("output schema (-want +got):\n%s", d)
	}
	f := k.Func("echo-all")
	schemas := map[string]string{}
	for _, p := range f.Type.Params {
		b, _ := json.Marshal(schema(p.Type))
		schemas[p.Name] = string(b)
	}
	want := map[string]string{
		"c":     `{"description":"1 unicode codepoint","type":"string"}`,
		"o":     `{"anyOf":[{"type":"null"},{"type":"number"}]}`,
		"r":     `{"oneOf":[{"properties":{"ok":{"type":"string"}},"required":["ok"],"type":"object"},{"properties":{"err":{"type":"number"}},"required":["err"],"type":"object"}]}`,
		"t":     `{"maxItems":3,"minItems":3,"prefixItems":[{"description":"1 unicode codepoint","type":"string"},{"anyOf":[{"type":"number"},{"enum":["NaN","inf","-inf"]}]},{"type":"number"}],"type":"array"}`,
		"color": `{"enum":["red","green","blue"],"type":"string"}`,
		"shape": `{"oneOf":[{"properties":{"tag":{"const":"circle"},"val":{"anyOf":[{"type":"number"},{"enum":["NaN","inf","-inf"]}]}},"required":["tag","val"],"type":"object"},{"properties":{"tag":{"const":"square"},"val":{"type":"number"}},"required":["tag","val"],"type":"object"},{"properties":{"tag":{"const":"none"}},"required":["tag"],"type":"object"}]}`,
		"bytes": `{"items":{"type":"number"},"type":"array"}`,
	}
	for name, w := range want {
		if schemas[name] != w {
			t.Errorf("schema of %s\n got %s\nwant %s", name, schemas[name], w)
		}
	}
}

// TestToolName: Wassette's normalisation, from its own test cases.
func TestToolName(t *testing.T) {
	cases := []struct{ iface, fn, want string }{
		{"", "get-weather", "get-weather"},
		{"foo:foo/foo", "generate", "foo_foo_foo_generate"},
		{"local:time-server/time@0.1.0", "get-current-time", "local_time-server_time_0_1_0_get-current-time"},
		{"foo", "a", "foo_a"},
		{"", "Mixed-CASE", "mixed-case"},
		{"", "special@chars#here", "special_chars_here"},
	}
	for _, c := range cases {
		if got := toolName(c.iface, c.fn); got != c.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", c.iface, c.fn, got, c.want)
		}
	}
}

// TestFixup links the way wit-component's output does: a table filled by
// a fixup module that imports from the module named "".
func TestFixup(t *testing.T) {
	k := loadTestdata(t, "fixup.wasm", Options{})
	if out := mustCall(t, k, "answer", `{}`, nil); string(out.JSON) != `{"result":42}` {
		t.Fatalf("answer = %s", out.JSON)
	}
}
