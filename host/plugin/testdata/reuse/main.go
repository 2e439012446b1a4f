// Command reuse is an agenthost/1 test plugin that declares "reuse": with
// AGENTHOST_REUSE=1 it serves one request per stdin line. Its tools report
// how many calls the instance has served and probe the limits that must
// stay per call (timeout, output cap, write quota) and the framing.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const manifest = `{
  "protocol": "agenthost/1", "name": "reuse", "version": "0.1.0", "reuse": true,
  "tools": [
    {"name": "count", "description": "Say how many calls this instance served."},
    {"name": "fail", "description": "A tool error (is_error)."},
    {"name": "crash", "description": "Exit 3 in the middle of a call."},
    {"name": "spin", "description": "Never answer."},
    {"name": "flood", "description": "Answer with n bytes.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "write", "description": "Write n bytes to /workspace/name.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}, "name": {"type": "string"}}}},
    {"name": "stray", "description": "Answer and write a second line in one write."}
  ],
  "requests": {"fs": [{"guest": "/workspace", "access": "rw", "reason": "write tests"}]}
}`

type request struct {
	Tool      string `json:"tool"`
	Arguments struct {
		N    int    `json:"n"`
		Name string `json:"name"`
	} `json:"arguments"`
}

func answer(text string, isError bool) {
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "is_error": isError})
	os.Stdout.Write(append(b, '\n'))
}

func main() {
	switch os.Getenv("AGENTHOST_MODE") {
	case "describe":
		os.Stdout.WriteString(manifest)
		return
	case "call":
	default:
		os.Exit(2)
	}
	reuse := os.Getenv("AGENTHOST_REUSE") == "1"
	in := bufio.NewReader(os.Stdin)
	served := 0
	for {
		line, err := in.ReadBytes('\n')
		if strings.TrimSpace(string(line)) == "" {
			return // stdin closed
		}
		var req request
		if json.Unmarshal(line, &req) != nil {
			os.Exit(2)
		}
		served++
		switch req.Tool {
		case "count":
			answer(fmt.Sprintf("call %d reuse=%v", served, reuse), false)
		case "fail":
			answer("it failed", true)
		case "crash":
			os.Stdout.WriteString(`{"content":[{"type":"text","text":"half`)
			os.Exit(3)
		case "spin":
			for {
			}
		case "flood":
			answer(strings.Repeat("x", req.Arguments.N), false)
		case "write":
			werr := os.WriteFile("/workspace/"+req.Arguments.Name, make([]byte, req.Arguments.N), 0o644)
			answer(fmt.Sprintf("call %d wrote %d: %v", served, req.Arguments.N, werr), werr != nil)
		case "stray":
			// One write holding an answer line and more: the host keeps
			// the answer and replaces the instance.
			os.Stdout.WriteString(`{"content":[{"type":"text","text":"first"}]}` + "\nsecond line\n")
		}
		if !reuse || err != nil {
			return
		}
	}
}
