package plugin

import "github.com/agenthost/agenthost/internal/wasmbin"

// ManifestSection is the name of the custom section that carries an
// agenthost/1 manifest.
const ManifestSection = "agenthost.manifest"

// ErrComponent is returned for a WASI 0.2 (component model) binary.
var ErrComponent = wasmbin.ErrComponent

// ErrNotWasm is returned for bytes that are not a WebAssembly binary.
var ErrNotWasm = wasmbin.ErrNotWasm

// binary is what the sandbox reads from a module's bytes before compiling
// it; Custom is its manifest section.
type binary = wasmbin.Module

// parseBinary reads the section headers of a core module and its manifest
// section.
func parseBinary(b []byte) (*binary, error) { return wasmbin.Parse(b, ManifestSection) }

// memoryPages is a memory limit in bytes as whole pages, at least one and
// at most the 32-bit limit.
func memoryPages(bytes uint64) uint32 {
	return uint32(min(max(bytes/wasmbin.PageSize, 1), wasmbin.MaxPages))
}
