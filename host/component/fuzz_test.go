package component

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/internal/componenttest"
	"github.com/agenthost/agenthost/internal/wasmbin"
)

// addComponentSeeds seeds a target with real components: those written by
// hand in the text format (testdata/*.wasm), the JavaScript component of
// the tests as ComponentizeJS 0.23.0 and jco 1.35.0 make it
// (testdata/seed/componentize-js-tools.wasm: testdata/js/tools built, its
// 12 MB engine module replaced by an empty module and its custom sections
// other than package-docs dropped, so that a seed is 52 KB and every
// component-level section is jco's), and types that use the one below
// many times over (componenttest.Nested).
func addComponentSeeds(f *testing.F) {
	for _, n := range []string{"abi.wasm", "wasi.wasm", "fixup.wasm", "shape_versions.wasm", "shape_async.wasm",
		"shape_nested.wasm", "shape_resource.wasm", "seed/componentize-js-tools.wasm"} {
		f.Add(readTestdata(f, n))
	}
	f.Add(componenttest.Nested("result", 6, 2))
	f.Add(componenttest.Nested("variant", 2, 4))
	f.Add(componenttest.Nested("record", 2, 3))
	f.Add(componenttest.Nested("tuple", 3, 2))
}

// FuzzLoad: no binary makes Load panic or take long, and what loads can
// be described within the limits. The core modules are not compiled
// (CompileLater): wazero's compiler is not what is fuzzed here, and
// compiling would make the target too slow to fuzz.
func FuzzLoad(f *testing.F) {
	addComponentSeeds(f)
	ctx := context.Background()
	// The interpreter: the bundles of exports are compiled at load, and
	// compiling to machine code with the fuzzer's coverage
	// instrumentation is too slow.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := Load(ctx, rt, b, Options{CompileLater: true})
		if err != nil {
			return
		}
		defer k.Close(ctx)
		total := 0
		for _, tl := range k.Tools() {
			total += len(tl.InputSchema) + len(tl.OutputSchema)
			if !json.Valid(tl.InputSchema) || (tl.OutputSchema != nil && !json.Valid(tl.OutputSchema)) {
				t.Fatalf("tool %s: schemas are not JSON: %.200s %.200s", tl.Name, tl.InputSchema, tl.OutputSchema)
			}
		}
		if total > maxSchemaBytes {
			t.Fatalf("schemas of %d bytes, more than %d", total, maxSchemaBytes)
		}
		for _, fn := range k.Funcs() {
			if s := fn.Type.String(); len(s) > maxTypeText+len("…") {
				t.Fatalf("%s: type is %d bytes of text", fn.Name, len(s))
			}
			decodeArgs(fn.Type, []byte(`{}`))
		}
		k.Imports()
	})
}

// FuzzParseComponent: no binary makes the parser panic, and every value type it
// makes has its properties right: within the limits, and (for a type
// small enough to walk) what was worked out once is what a walk of its
// tree finds.
func FuzzParseComponent(f *testing.F) {
	addComponentSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseComponent(b)
		if err != nil {
			return
		}
		checkComp(t, c)
	})
}

// FuzzTypes: the type checks, fed type sections directly: the bytes are
// the contents of a component's one type section (a count, then type
// definitions).
func FuzzTypes(f *testing.F) {
	// The type sections of the seed components.
	for _, s := range [][]byte{readTestdata(f, "abi.wasm"), readTestdata(f, "wasi.wasm"), readTestdata(f, "seed/componentize-js-tools.wasm"),
		componenttest.Nested("result", 6, 2), componenttest.Nested("variant", 2, 4), componenttest.Nested("record", 2, 3)} {
		secs, err := wasmbin.Sections(s[8:], 8)
		if err != nil {
			f.Fatal(err)
		}
		for _, sec := range secs {
			if sec.ID == secType {
				f.Add(sec.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b := []byte("\x00asm\x0d\x00\x01\x00")
		b = append(b, secType)
		b = append(b, uleb(uint64(len(body)))...)
		b = append(b, body...)
		c, err := parseComponent(b)
		if err != nil {
			return
		}
		checkComp(t, c)
	})
}

// checkComp checks every type of a parsed component and its shims.
func checkComp(t *testing.T, c *comp) {
	t.Helper()
	w := &schemaWriter{max: maxSchemaBytes}
	for _, td := range c.sc.types {
		if td.val != nil {
			checkType(t, td.val)
			w.b = w.b[:0]
			w.schema(td.val)
			if !w.over() && !json.Valid(w.b) {
				t.Fatalf("schema of %s is not JSON: %.200s", td.val, w.b)
			}
		}
		if td.fn != nil {
			if s := td.fn.String(); len(s) > maxTypeText+len("…") {
				t.Fatalf("function type is %d bytes of text", len(s))
			}
			for _, p := range td.fn.Params {
				checkType(t, p.Type)
			}
		}
	}
	for _, n := range c.comps {
		checkComp(t, n)
	}
}

// checkType checks a type's worked-out properties.
func checkType(t *testing.T, ty *Type) {
	t.Helper()
	if ty.nest > maxTypeDepth || ty.parts > maxTypeParts {
		t.Fatalf("type nests %d deep, has %d parts: past the limits", ty.nest, ty.parts)
	}
	if s := ty.String(); len(s) > maxTypeText+len("…") {
		t.Fatalf("type is %d bytes of text", len(s))
	}
	if ty.size >= 1<<28 {
		t.Fatalf("type of %d bytes", ty.size)
	}
	if ty.parts > 5000 {
		return // too large to walk every time
	}
	if n := walkNest(ty); n != ty.nest {
		t.Fatalf("%s: nest %d, a walk finds %d", ty, ty.nest, n)
	}
	if b := walkBulk(ty); b != ty.bulk {
		t.Fatalf("%s: bulk %v, a walk finds %v", ty, ty.bulk, b)
	}
	if u := walkUnsupported(ty); u != ty.unsup {
		t.Fatalf("%s: unsupported %q, a walk finds %q", ty, ty.unsup, u)
	}
	if n := walkFlat(ty); min(n, maxFlatParams+1) != min(len(ty.flat), maxFlatParams+1) {
		t.Fatalf("%s: %d flat values, a walk finds %d", ty, len(ty.flat), n)
	}
}

// The walks are what the properties were before they were worked out once.

func walkNest(t *Type) int {
	d := 0
	for _, c := range t.children() {
		d = max(d, walkNest(c))
	}
	return d + 1
}

func walkBulk(t *Type) bool {
	switch t.Kind {
	case String, List, Map:
		return true
	}
	for _, c := range t.children() {
		if walkBulk(c) {
			return true
		}
	}
	return false
}

func walkUnsupported(t *Type) string {
	switch t.Kind {
	case Own, Borrow:
		return "a resource handle (" + t.String() + ")"
	case Stream, Future:
		return "a " + t.Kind.String()
	case ErrorContext:
		return "an error-context"
	case FixedList:
		return "a fixed-length list"
	case Map:
		return "a map"
	}
	for _, c := range t.children() {
		if s := walkUnsupported(c); s != "" {
			return s
		}
	}
	return ""
}

// walkFlat counts the canonical ABI's flat values of t.
func walkFlat(t *Type) int {
	switch t.Kind {
	case String, List, Map:
		return 2
	case Record, Tuple:
		n := 0
		for _, m := range t.members() {
			n += walkFlat(m)
		}
		return n
	case FixedList:
		return int(t.Len) * walkFlat(t.Elem)
	case Variant, Option, Result, Enum:
		n := 0
		for _, c := range t.caseTypes() {
			if c != nil {
				n = max(n, walkFlat(c))
			}
		}
		return 1 + n
	}
	return 1
}

// FuzzArgs: no JSON arguments make decoding panic.
func FuzzArgs(f *testing.F) {
	k := loadTestdata(f, "abi.wasm", Options{})
	fn := k.Func("echo-all")
	f.Add([]byte(`{"b":true,"p":{"x":1,"y":2},"shape":{"tag":"circle","val":2.5},"perms":["read"],"t":["x",1,2]}`))
	f.Add([]byte(`{"u64":1e19,"i8":-129,"c":"ab","r":{"ok":"x","err":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeArgs(fn.Type, b)
	})
}
