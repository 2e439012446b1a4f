package component

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/componenttest"
	"github.com/agenthost/agenthost/internal/wasmbin"
)

// loadWithin loads b, failing the test if the load has not returned
// within bound (it is then left running: a hang must not hang the test).
func loadWithin(t *testing.T, b []byte, bound time.Duration) (*Component, error, time.Duration) {
	t.Helper()
	type result struct {
		k   *Component
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		k, err := Load(context.Background(), newRuntime(t, ""), b, Options{})
		done <- result{k, err}
	}()
	select {
	case r := <-done:
		d := time.Since(start)
		if r.k != nil {
			t.Cleanup(func() { r.k.Close(context.Background()) })
		}
		if d > bound {
			t.Errorf("load took %v, more than %v", d, bound)
		}
		return r.k, r.err, d
	case <-time.After(bound):
		t.Fatalf("load of a %d-byte component did not return within %v", len(b), bound)
	}
	return nil, nil, 0
}

// TestNestedTypes: a type that uses the one below it many times over
// (small in the binary, exponential as a tree) loads or is refused within
// a second, each property of a type worked out once; what is rendered from
// a type (its JSON Schema, its text in messages) is bounded.
func TestNestedTypes(t *testing.T) {
	cases := []struct {
		shape         string
		levels, width int
		err           string // "" loads
	}{
		// Issue 34's components: 9.7 s and more than 60 s in validate.
		{"result", 24, 2, "value type has more than 1000000 parts"},
		{"variant", 8, 100, "value type has more than 1000000 parts"},
		// Within the parts, but the JSON Schemas would be some 30 MB.
		{"result", 16, 2, "the JSON Schemas of the component's tools come to more than 1048576 bytes"},
		{"variant", 2, 100, "the JSON Schemas of the component's tools come to more than 1048576 bytes"},
		{"record", 3, 60, "the JSON Schemas of the component's tools come to more than 1048576 bytes"},
		{"tuple", 5, 16, "value type has more than 1000000 parts"},
		// Small enough: loads.
		{"result", 8, 2, ""},
		{"variant", 1, 100, ""},
		{"record", 3, 8, ""},
	}
	for _, c := range cases {
		b := componenttest.Nested(c.shape, c.levels, c.width)
		k, err, d := loadWithin(t, b, time.Second)
		t.Logf("%s of %d levels, %d wide (%d bytes): %v, %v", c.shape, c.levels, c.width, len(b), d, err)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %d×%d: err = %v, want %q", c.shape, c.levels, c.width, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %d×%d: %v", c.shape, c.levels, c.width, err)
			continue
		}
		tl := k.Func("f").Tool()
		var in, out map[string]any
		if json.Unmarshal(tl.InputSchema, &in) != nil || json.Unmarshal(tl.OutputSchema, &out) != nil {
			t.Errorf("%s %d×%d: schemas are not JSON: %.200s %.200s", c.shape, c.levels, c.width, tl.InputSchema, tl.OutputSchema)
		}
		// A message naming the type is cut.
		_, err = k.Call(context.Background(), "f", []byte(`{}`), nil)
		var ae *ArgumentError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), `missing argument "x"`) || len(err.Error()) > maxTypeText+100 {
			t.Errorf("%s %d×%d: call without x: %d bytes: %.300v", c.shape, c.levels, c.width, len(err.Error()), err)
		}
	}
}

// TestSchemaBytes: the JSON Schemas are what encoding/json writes of
// Wassette's maps: keys sorted, HTML characters escaped.
func TestSchemaBytes(t *testing.T) {
	rec := &Type{Kind: Record, Fields: []Field{{"zeta", primTypes[U8]}, {"a<b>", primTypes[String]}}}
	if err := rec.layout(); err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"a\u003cb\u003e":{"type":"string"},"zeta":{"type":"number"}},"required":["zeta","a\u003cb\u003e"],"type":"object"}`
	if got := string(schema(rec)); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	var v any
	if err := json.Unmarshal(schema(rec), &v); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(v)
	if !bytes.Equal(again, schema(rec)) {
		t.Errorf("encoding/json writes %s", again)
	}
}

// TestTypeSize: a record's size is summed without wrapping: 32 fixed
// lists of 128 MiB are 4 GiB, not 0.
func TestTypeSize(t *testing.T) {
	fl := &Type{Kind: FixedList, Elem: primTypes[U8], Len: 1 << 27}
	if err := fl.layout(); err != nil {
		t.Fatal(err)
	}
	rec := &Type{Kind: Record}
	for range 32 {
		rec.Fields = append(rec.Fields, Field{"f", fl})
	}
	if err := rec.layout(); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("record of 32 × 128 MiB: size %d, err %v; want it refused as too large", rec.size, err)
	}
}

// TestParamsSize: parameters that together are too large to travel in
// memory are refused at parse (their tuple had no size).
func TestParamsSize(t *testing.T) {
	body := []byte{0x02, 0x67, 0x7d}
	body = append(body, uleb(1<<27)...) // t0 = list<u8, 2^27>
	body = append(body, 0x40, 0x02, 0x01, 'a', 0x00, 0x01, 'b', 0x00, 0x01, 0x00)
	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = append(b, secType, byte(len(body)))
	b = append(b, body...)
	if _, err := parseComponent(b); err == nil || !strings.Contains(err.Error(), "function parameters: type tuple<list<u8, 134217728>, list<u8, 134217728>> is too large") {
		t.Errorf("err = %v", err)
	}
}

// TestShimInstances: a shim's exports are checked once, not at each of
// its instantiations: 60,000 instantiations of a shim of 60,000 type
// exports were 3.6 billion steps.
func TestShimInstances(t *testing.T) {
	const n = 60000
	shim := []byte("\x00asm\x0d\x00\x01\x00")
	shim = append(shim, secType, 0x04, 0x01, 0x6f, 0x01, 0x7d) // t0 = tuple<u8>
	exports := uleb(n)
	for i := range n {
		name := "t" + strconv.Itoa(i)
		exports = append(exports, 0x00, byte(len(name)))
		exports = append(exports, name...)
		exports = append(exports, sortType, 0x00, 0x00) // (export "tI" (type 0))
	}
	shim = append(shim, secExport)
	shim = append(shim, uleb(uint64(len(exports)))...)
	shim = append(shim, exports...)
	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = append(b, secComponent)
	b = append(b, uleb(uint64(len(shim)))...)
	b = append(b, shim...)
	insts := uleb(n)
	for range n {
		insts = append(insts, 0x00, 0x00, 0x00) // (instance (instantiate 0))
	}
	b = append(b, secInstance)
	b = append(b, uleb(uint64(len(insts)))...)
	b = append(b, insts...)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := parseComponent(b)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("parsed in %v", time.Since(start))
	case <-time.After(time.Second):
		t.Fatalf("parse of a %d-byte component did not return within 1s", len(b))
	}
}

// TestDeclNesting: instance and component types declared inside one
// another (each a recursion of the parser) are refused past maxScopes, as
// a load error, not a stack overflow that ends the process.
func TestDeclNesting(t *testing.T) {
	const levels = 4 << 20
	// (type (component (type (component ... (component) ...)))), each
	// level a component type of one declaration: the next type.
	var body []byte
	body = append(body, 0x01) // one type
	for range levels {
		body = append(body, 0x41, 0x01, 0x01) // component type, 1 decl, a type
	}
	body = append(body, 0x41, 0x00)
	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = append(b, 0x07)
	b = append(b, uleb(uint64(len(body)))...)
	b = append(b, body...)
	_, err, _ := loadWithin(t, b, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "nest more than 16 levels deep") {
		t.Errorf("err = %v", err)
	}
}

// TestDuplicateLabels: a record with two fields of one name is refused.
func TestDuplicateLabels(t *testing.T) {
	body := []byte{0x01, 0x72, 0x02, 0x01, 'a', 0x7d, 0x01, 'a', 0x7d}
	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = append(b, 0x07, byte(len(body)))
	b = append(b, body...)
	if _, err := parseComponent(b); err == nil || !strings.Contains(err.Error(), `record has two labels "a"`) {
		t.Errorf("err = %v", err)
	}
}

func uleb(v uint64) []byte { return wasmbin.AppendUleb32(nil, uint32(v)) }

// TestCoreInstances: core instances past maxCoreInstances are refused at
// parse. Each bundle of exports is compiled at load: 60,000 of them, each
// exporting the memory under another name, kept a load busy for long.
func TestCoreInstances(t *testing.T) {
	const n = 60000
	mod := []byte("\x00asm\x01\x00\x00\x00")
	mod = append(mod, 0x05, 0x03, 0x01, 0x00, 0x01)            // one memory
	mod = append(mod, 0x07, 0x05, 0x01, 0x01, 'm', 0x02, 0x00) // exported as "m"
	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = append(b, secCoreModule, byte(len(mod)))
	b = append(b, mod...)
	b = append(b, secCoreInstance, 0x04, 0x01, 0x00, 0x00, 0x00)           // (core instance (instantiate 0))
	b = append(b, secAlias, 0x07, 0x01, 0x00, 0x02, 0x01, 0x00, 0x01, 'm') // (alias core export 0 "m" (core memory))
	body := uleb(n)
	for i := range n {
		name := "e" + strconv.Itoa(i)
		body = append(body, 0x01, 0x01) // a bundle of one export:
		body = append(body, byte(len(name)))
		body = append(body, name...)
		body = append(body, coreSortMemory, 0x00) // the memory
	}
	b = append(b, secCoreInstance)
	b = append(b, uleb(uint64(len(body)))...)
	b = append(b, body...)
	_, err, _ := loadWithin(t, b, time.Second)
	if err == nil || !strings.Contains(err.Error(), "more than 512 core instances") {
		t.Errorf("err = %v", err)
	}
}

// TestArgumentMessages: a message about a call's arguments names the
// type's cases and the place in the arguments cut short, however many
// and long the labels.
func TestArgumentMessages(t *testing.T) {
	long := strings.Repeat("n", 100)
	enum := &Type{Kind: Enum}
	for i := range 10000 {
		enum.Names = append(enum.Names, long+strconv.Itoa(i))
	}
	rec := &Type{Kind: Record, Fields: []Field{{strings.Repeat("f", 100000), enum}}}
	for _, ty := range []*Type{enum, rec} {
		if err := ty.layout(); err != nil {
			t.Fatal(err)
		}
	}
	ft := &FuncType{Params: []Field{{"x", rec}}}
	_, err := decodeArgs(ft, []byte(`{"x":{"`+rec.Fields[0].Name+`":"nope"}}`))
	if err == nil || !strings.Contains(err.Error(), `"nope" is not one of nnnn`) || len(err.Error()) > 3*(maxTypeText+10) {
		t.Errorf("error of %d bytes: %.300v", len(err.Error()), err)
	}
}
