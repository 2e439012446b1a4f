//go:build roots

package main

// Built with -tags "v2 roots" the plugin imports hyper-mcp's list_roots,
// which agenthost refuses at load.

//go:wasmimport extism:host/user list_roots
func listRoots() uint64

//go:wasmexport roots
func roots() int32 {
	output(get(listRoots()))
	return 0
}
