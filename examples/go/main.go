package main

import (
	"encoding/json"
	"os"
)

const manifest = `{"protocol":"agenthost/1","name":"echo","version":"0.1.0",
 "tools":[{"name":"echo","description":"Return the given text unchanged.",
  "input_schema":{"type":"object","required":["text"],
   "properties":{"text":{"type":"string","description":"The text to return."}},
   "additionalProperties":false}}]}`

func main() {
	switch os.Getenv("AGENTHOST_MODE") {
	case "describe":
		os.Stdout.WriteString(manifest)
	case "call":
		var req struct {
			Arguments struct{ Text string } `json:"arguments"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
			reply("invalid request: "+err.Error(), true)
			os.Exit(1)
		}
		reply(req.Arguments.Text, false)
	default:
		os.Stderr.WriteString("AGENTHOST_MODE must be describe or call\n")
		os.Exit(2)
	}
}

func reply(text string, isError bool) {
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"content":  []map[string]string{{"type": "text", "text": text}},
		"is_error": isError,
	})
}
