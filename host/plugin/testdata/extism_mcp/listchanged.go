//go:build listchanged

package main

// Built with -tags "v2 listchanged" the plugin's tools change: the call of
// "shrink" makes list_tools offer greet alone, with another description,
// and "break" makes list_tools fail; each says so with hyper-mcp's
// notify_tool_list_changed. The state is an Extism var, as every call runs
// in a fresh instance.

import "strings"

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmimport extism:host/env var_get
func varGet(uint64) uint64

//go:wasmimport extism:host/env var_set
func varSet(uint64, uint64)

func init() {
	listTools = func() (string, string) {
		switch string(get(varGet(put([]byte("tools"))))) {
		case "shrunk":
			return `{"tools":[{"name":"greet","description":"Greet someone, shortly","inputSchema":{"type":"object"}}]}`, ""
		case "broken":
			return "", "the tools cannot be listed now"
		}
		all := strings.TrimSuffix(tools, "\n]}") + `,
 {"name":"shrink","description":"Offer greet alone","inputSchema":{"type":"object"}},
 {"name":"break","description":"Make list_tools fail","inputSchema":{"type":"object"}}
]}`
		return all, ""
	}
	extra = func(name string) ([]byte, bool) {
		switch name {
		case "shrink", "break":
			state := map[string]string{"shrink": "shrunk", "break": "broken"}[name]
			varSet(put([]byte("tools")), put([]byte(state)))
			notifyToolListChanged()
			return text(name+" done", false), true
		}
		return nil, false
	}
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	output([]byte(`{"prompts":[]}`))
	return 0
}
