// Command echo is the smallest useful agenthost/1 plugin: one tool, echo,
// that returns its "text" argument. It needs nothing but the Go standard
// library; see README.md for the build command and docs/plugin-protocol.md
// for the protocol.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// manifest is printed in describe mode. It requests no capabilities.
const manifest = `{
  "protocol": "agenthost/1",
  "name": "echo",
  "version": "0.1.0",
  "description": "Echoes text back; an example plugin.",
  "reuse": true,
  "tools": [{
    "name": "echo",
    "description": "Return the given text unchanged.",
    "input_schema": {
      "type": "object",
      "required": ["text"],
      "properties": {"text": {"type": "string", "description": "The text to return."}},
      "additionalProperties": false
    }
  }]
}
`

func main() {
	mode, tool := os.Getenv("AGENTHOST_MODE"), os.Getenv("AGENTHOST_TOOL")
	if mode == "call" && os.Getenv("AGENTHOST_REUSE") == "1" {
		os.Exit(serve(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(mode, tool, os.Stdin, os.Stdout, os.Stderr))
}

// serve answers many calls from one instance, as the manifest's "reuse"
// allows: one request per line of stdin, one CallToolResult line on stdout
// for each (is_error marks a tool error), until stdin ends. Each request
// names its tool (the host does not set AGENTHOST_TOOL in this mode).
func serve(stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			// One decode a call, and no warm-up: in a reused instance
			// encoding/json's caches are already warm after the first call.
			var req request
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				reply(stdout, "invalid request: "+jerr.Error(), true)
			} else {
				text, isError := answer(req.Tool, &req)
				reply(stdout, text, isError)
			}
		}
		if err != nil {
			return 0 // the host closed stdin: no more calls
		}
	}
}

// request is what agenthost writes on stdin in call mode.
type request struct {
	Tool      string `json:"tool"`
	Arguments struct {
		Text *string `json:"text"`
	} `json:"arguments"`
	CallID string `json:"call_id"`
}

// run returns the exit code: 0 success, 1 tool error (shown to the model),
// 2 protocol misuse (a plugin failure).
func run(mode, tool string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch mode {
	case "describe":
		io.WriteString(stdout, manifest)
		return 0
	case "call":
	default:
		fmt.Fprintf(stderr, "echo: unknown AGENTHOST_MODE %q\n", mode)
		return 2
	}

	// Everything that does not need the request happens before reading it:
	// agenthost starts the instance ahead of the call, so this warm-up runs
	// while the model thinks, not while it waits for the result.
	var warm request
	_ = json.Unmarshal([]byte(`{"tool":"echo","arguments":{"text":"x"},"call_id":"c"}`), &warm)
	reply(io.Discard, "x", false)

	var req request
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		return reply(stdout, "invalid request: "+err.Error(), true)
	}
	text, isError := answer(tool, &req)
	return reply(stdout, text, isError)
}

// answer is the outcome of one call of tool: the text and whether it is a
// tool error.
func answer(tool string, req *request) (string, bool) {
	if tool != "echo" {
		return fmt.Sprintf("unknown tool %q", tool), true
	}
	if req.Arguments.Text == nil {
		return "text is required", true
	}
	return *req.Arguments.Text, false
}

// reply writes a CallToolResult and returns the matching exit code.
func reply(stdout io.Writer, text string, isError bool) int {
	json.NewEncoder(stdout).Encode(result{Content: []content{{Type: "text", Text: text}}, IsError: isError})
	if isError {
		return 1
	}
	return 0
}

// result is a CallToolResult with text content.
type result struct {
	Content []content `json:"content"`
	IsError bool      `json:"is_error"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
