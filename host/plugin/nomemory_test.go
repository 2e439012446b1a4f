package plugin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// noMemoryWasm is a WASI command whose _start does nothing and which has no
// memory at all (valid WebAssembly; wazero's Module.Memory then returns a
// typed nil).
var noMemoryWasm = []byte("\x00asm\x01\x00\x00\x00" +
	"\x01\x04\x01\x60\x00\x00" + // type: func()
	"\x03\x02\x01\x00" + // function 0 of that type
	"\x07\x0a\x01\x06_start\x00\x00" + // export _start
	"\x0a\x04\x01\x02\x00\x0b") // code: empty body

// TestModuleWithoutMemory: a module without memory runs like any other; the
// host must not trip over the memory it does not have.
func TestModuleWithoutMemory(t *testing.T) {
	r := newRuntime(t)
	p := load(t, r, Spec{
		Name: "nomem",
		Wasm: noMemoryWasm,
		Kind: KindWASICLI,
		Tools: []CLITool{{
			Name:    "run",
			Command: func(json.RawMessage) ([]string, []byte, error) { return []string{"nomem"}, nil, nil },
		}},
	})
	for i := range 2 { // cold, then pre-started if the kind pre-starts
		res, err := p.Call(context.Background(), loop.ToolCall{ID: "c", Name: "run", Arguments: "{}"})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %+v, %v", i+1, res, err)
		}
	}
}
