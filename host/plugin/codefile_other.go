//go:build !linux

package plugin

import "github.com/tetratelabs/wazero"

// fileBackCode is Linux only (codefile_linux.go); elsewhere the machine
// code stays where wazero put it.
func (r *Runtime) fileBackCode(wazero.CompiledModule, string, uint32) bool { return false }
