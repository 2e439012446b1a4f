// Package plugins holds agenthost's first-party tool plugins as embedded
// WebAssembly. It is a leaf: the host loads these bytes for plugin blocks
// with source = "builtin:NAME".
//
// The sources live in plugins/NAME (each its own Go module, built with
// GOOS=wasip1 GOARCH=wasm). Rebuild the committed .wasm files with
//
//	go generate ./plugins/...
//
// from the repository root; see gen.go for the exact recipe. The build is
// reproducible with a given Go toolchain, and CI (.ci/check-generate) fails
// when the committed files differ from a rebuild.
package plugins

//go:generate go run gen.go

import (
	_ "embed"
	"slices"
	"unsafe"
)

// The modules are embedded as strings: their bytes then sit in the
// executable's read-only data, which the process can give back to the page
// cache once they are compiled (agenthost run trims the executable's
// pages), and which no code can write to by mistake.
//
//go:embed core.wasm
var core string

var builtins = map[string][]byte{
	"core": unsafe.Slice(unsafe.StringData(core), len(core)),
}

// Builtin returns a copy of the WebAssembly module of the first-party plugin
// name (as in source = "builtin:core"), and false when there is none.
func Builtin(name string) ([]byte, bool) {
	b, ok := builtins[name]
	if !ok {
		return nil, false
	}
	return slices.Clone(b), true
}

// BuiltinShared is Builtin without the copy: the embedded bytes
// themselves, read-only memory (writing to it faults). The plugin runtime,
// which only reads them, uses it, so that checking that a builtin exists
// and compiling it copy none of its megabytes.
func BuiltinShared(name string) ([]byte, bool) {
	b, ok := builtins[name]
	return b[:len(b):len(b)], ok
}

// BuiltinNames returns the names of the first-party plugins, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for name := range builtins {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
