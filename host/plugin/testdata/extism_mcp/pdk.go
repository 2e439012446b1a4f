// Command extism_mcp is an Extism plugin written without a PDK: the
// extism:host/env imports are declared here. Built with -tags v1 it speaks
// the mcp.run dialect (describe, call), with -tags v2 hyper-mcp v2
// (list_tools, call_tool). Its tools include hostile ones for the sandbox
// tests. Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

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

//go:wasmimport extism:host/env config_get
func configGet(uint64) uint64

//go:wasmimport extism:host/env http_request
func httpRequest(uint64, uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

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

func output(b []byte) { outputSet(put(b), uint64(len(b))) }

func fail(msg string) int32 {
	errorSet(put([]byte(msg)))
	return 1
}

func main() {}
