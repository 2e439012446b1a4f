package plugin

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// Machine code backed by a file of the cache (codefile_linux.go does the
// mapping). wazero puts a compiled module's machine code in an anonymous
// mapping and copies all of it there, from its compilation cache or from
// the compiler, so every page is resident for as long as the module lives:
// 13.4 MB for core, 12.9 MB for examples/echo, the largest part of a run's
// resident set. A run executes a small part of it (the guest's runtime
// start-up and the code its calls take). Native programs keep their code
// in files the kernel pages in on demand; so, on Linux, once a module is
// compiled, its machine code is written to a file of the private cache
// (once: a later compile compares the file with the code byte for byte and
// rewrites it when they differ) and the file is mapped over the anonymous
// mapping, at the same address, with the same contents and protection. The
// code then runs as before; its pages are read from the page cache when
// first executed, and pages never executed take no memory of the process.

// codeDir is the cache's directory of machine code; codeFormat names the
// files' layout (the code's pages as they are in memory).
const (
	codeDir    = "agenthost-code"
	codeFormat = "1"
)

// machineCode returns the memory holding cm's machine code in wazero's
// optimizing compiler, from the start of its mapping for length bytes; nil
// when cm is not of the types this knows. wazero has no API for it, so it
// is read through reflection, as releaseBodies does: the engine's entry for
// cm's module (engine.compiledModules, read under engine.mux) holds the
// executable. Every step checks the name and type it expects and gives up
// at the first that differs: a wazero release that changes them makes the
// code stay where wazero put it (and TestCodeFileBacked fail), never a
// crash. The memory stays mapped while cm is open.
func machineCode(cm wazero.CompiledModule) []byte {
	if w, ok := cm.(*compiledModule); ok {
		cm = w.CompiledModule
	}
	outer, mod := wasmModule(cm)
	if !mod.IsValid() {
		return nil
	}
	eng := outer.FieldByName("compiledEngine")
	if !eng.IsValid() || eng.Kind() != reflect.Interface || eng.IsNil() {
		return nil
	}
	id := mod.FieldByName("ID")
	e := eng.Elem()
	if !id.IsValid() || e.Type().String() != "*wazevo.engine" || e.IsNil() {
		return nil
	}
	e = e.Elem()
	mux, mods := e.FieldByName("mux"), e.FieldByName("compiledModules")
	if !mux.IsValid() || mux.Type() != reflect.TypeFor[sync.RWMutex]() ||
		!mods.IsValid() || mods.Kind() != reflect.Map || mods.Type().Key() != id.Type() {
		return nil
	}
	lock := (*sync.RWMutex)(unsafe.Pointer(mux.UnsafeAddr()))
	lock.RLock()
	defer lock.RUnlock()
	ent := reflect.NewAt(mods.Type(), unsafe.Pointer(mods.UnsafeAddr())).Elem().MapIndex(id)
	if !ent.IsValid() || ent.Type().String() != "*wazevo.compiledModuleWithCount" || ent.IsNil() {
		return nil
	}
	cmv := ent.Elem().FieldByName("compiledModule")
	if !cmv.IsValid() || cmv.Kind() != reflect.Pointer || cmv.IsNil() {
		return nil
	}
	exs := cmv.Elem().FieldByName("executables")
	if !exs.IsValid() || exs.Kind() != reflect.Pointer || exs.IsNil() {
		return nil
	}
	code := exs.Elem().FieldByName("executable")
	if !code.IsValid() || code.Type() != reflect.TypeFor[[]byte]() || code.Len() == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(code.UnsafePointer()), code.Len())
}
