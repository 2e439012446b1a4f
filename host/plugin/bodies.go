package plugin

import (
	"reflect"

	"github.com/tetratelabs/wazero"
)

// releaseBodies lets the garbage collector have the function bodies wazero
// keeps in a compiled module, and returns how many bytes of bodies it
// released.
//
// wazero decodes every function body into a slice of its own and keeps the
// decoded module for the CompiledModule's lifetime, but reads a body only
// while compiling it (internal/engine/wazevo and internal/engine/interpreter
// CompileModule, and the validation before them): instantiating and calling
// use the machine code, the types and the data segments. For a Go guest the
// bodies are ~2 MB of a run's ~5 MB of live heap (core: 2.1 of the 4.5 MB
// a compiled module holds), and live heap counts twice at the heap's goal.
// wazero has no API to drop them, so they are cleared through reflection:
// Body and LocalTypes of each wasm.Code in the compiledModule's module,
// after CompileModule returned and before the module is shared.
//
// Every step checks the name and type it expects and stops, changing
// nothing more, at the first that differs: a wazero release that changes
// these types makes this a no-op (and TestReleaseBodies fail), never a
// crash. go.mod pins the wazero version this was checked against.
func releaseBodies(cm wazero.CompiledModule) int {
	_, mod := wasmModule(cm)
	if !mod.IsValid() {
		return 0
	}
	code := mod.FieldByName("CodeSection")
	if !code.IsValid() || code.Kind() != reflect.Slice || code.Type().Elem().Kind() != reflect.Struct {
		return 0
	}
	elem := code.Type().Elem()
	body, ok := elem.FieldByName("Body")
	if !ok || body.Type != reflect.TypeFor[[]byte]() {
		return 0
	}
	locals, ok := elem.FieldByName("LocalTypes")
	if !ok || locals.Type.Kind() != reflect.Slice || locals.Type.Elem().Kind() < reflect.Uint8 || locals.Type.Elem().Kind() > reflect.Uint64 {
		return 0
	}
	n := 0
	for i := range code.Len() {
		c := code.Index(i)
		b := c.FieldByIndex(body.Index)
		n += b.Len()
		b.SetZero()
		c.FieldByIndex(locals.Index).SetZero()
	}
	return n
}

// wasmModule returns, through reflection, the struct behind cm (a
// *wazero.compiledModule) and its decoded module (wasm.Module), writable
// (a Value made from the unexported field's pointer); invalid Values when
// cm is not of those types.
func wasmModule(cm wazero.CompiledModule) (outer, mod reflect.Value) {
	v := reflect.ValueOf(cm)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct ||
		v.Type().String() != "*wazero.compiledModule" {
		return reflect.Value{}, reflect.Value{}
	}
	f := v.Elem().FieldByName("module")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().String() != "*wasm.Module" || f.IsNil() {
		return reflect.Value{}, reflect.Value{}
	}
	return v.Elem(), reflect.NewAt(f.Type().Elem(), f.UnsafePointer()).Elem()
}
