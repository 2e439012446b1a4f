//go:build listchanged

package main

// Built with -tags "v2 listchanged" the plugin imports hyper-mcp's
// notify_tool_list_changed, which agenthost refuses at load.

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmexport changed
func changed() int32 {
	notifyToolListChanged()
	return 0
}
