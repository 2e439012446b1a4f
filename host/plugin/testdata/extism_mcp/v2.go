//go:build v2

package main

import "encoding/json"

//go:wasmexport list_tools
func listTools() int32 {
	output([]byte(tools))
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Context json.RawMessage `json:"context"`
		Request struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"request"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	if in.Context == nil {
		return fail("no context")
	}
	output(run(in.Request.Name, in.Request.Arguments))
	return 0
}
