package component

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzLoad: no binary makes Load panic, and what loads can be described.
// Minimising an input compiles it many times: run with
// -fuzzminimizetime 2s or the fuzzer seems to stall.
func FuzzLoad(f *testing.F) {
	for _, n := range []string{"abi.wasm", "wasi.wasm", "fixup.wasm", "shape_versions.wasm"} {
		f.Add(readTestdata(f, n))
	}
	ctx := context.Background()
	// The interpreter: compiling to machine code with the fuzzer's
	// coverage instrumentation is too slow to fuzz.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := Load(ctx, rt, b, Options{})
		if err != nil {
			return
		}
		defer k.Close(ctx)
		k.Tools()
		k.Imports()
	})
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
