//go:build v1

package main

import "encoding/json"

//go:wasmexport describe
func describe() int32 {
	output([]byte(tools))
	return 0
}

//go:wasmexport call
func call() int32 {
	var in struct {
		Params struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	output(run(in.Params.Name, in.Params.Arguments))
	return 0
}
