// Command hypermcp is a hyper-mcp v2 Extism plugin written without a PDK,
// speaking the wire format of hyper-mcp's plugin templates: every export
// takes {"context": {"_meta": {...}, "id": ...}, "request": {...}} and
// refuses input without the context's _meta and id, as the PDK's types
// do. It offers what the MCP conformance suite's server scenarios call:
// tools, resources, resource templates, prompts and completions.
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

import (
	"encoding/json"
	"errors"
)

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(uint64) uint64

//go:wasmimport extism:host/env length
func length(uint64) uint64

//go:wasmimport extism:host/env load_u8
func loadU8(uint64) uint32

//go:wasmimport extism:host/env store_u8
func storeU8(uint64, uint32)

//go:wasmimport extism:host/env output_set
func outputSet(uint64, uint64)

//go:wasmimport extism:host/env error_set
func errorSet(uint64)

func input() []byte {
	n := inputLength()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(inputLoadU8(uint64(i)))
	}
	return b
}

func put(b []byte) uint64 {
	off := alloc(uint64(len(b)))
	for i, c := range b {
		storeU8(off+uint64(i), uint32(c))
	}
	return off
}

func get(off uint64) []byte {
	if off == 0 {
		return nil
	}
	b := make([]byte, length(off))
	for i := range b {
		b[i] = byte(loadU8(off + uint64(i)))
	}
	return b
}

func fail(msg string) int32 {
	errorSet(put([]byte(msg)))
	return 1
}

// request is the input of every export: the request context and the
// request's parameters.
type request struct {
	Context *struct {
		Meta map[string]any  `json:"_meta"`
		ID   json.RawMessage `json:"id"`
	} `json:"context"`
	Request json.RawMessage `json:"request"`
}

// serve reads the input as the PDK does (a missing context, _meta or id
// is an error) and outputs what handle returns as JSON.
func serve(handle func(r request) (any, error)) int32 {
	var r request
	if err := json.Unmarshal(input(), &r); err != nil {
		return fail("bad input: " + err.Error())
	}
	switch {
	case r.Context == nil:
		return fail("missing field `context`")
	case r.Context.Meta == nil:
		return fail("missing field `_meta`")
	case r.Context.ID == nil:
		return fail("missing field `id`")
	}
	out, err := handle(r)
	if err != nil {
		return fail(err.Error())
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fail(err.Error())
	}
	outputSet(put(b), uint64(len(b)))
	return 0
}

var errUnknown = errors.New("unknown")

func main() {}
