// Command echo is a well-behaved agenthost/1 test plugin. Its manifest comes
// from describe mode; its tools echo arguments and probe the sandbox (env,
// clock, randomness, files under /workspace).
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"
)

const manifest = `{
  "protocol": "agenthost/1", "name": "echo", "version": "0.1.0",
  "description": "test plugin",
  "tools": [
    {"name": "echo", "description": "Echo text as a CallToolResult.",
     "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}, "additionalProperties": false}},
    {"name": "plain", "description": "Echo text as plain stdout.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "fail", "description": "Fail with exit code 1.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "soft_fail", "description": "Report is_error with exit code 0."},
    {"name": "env", "description": "List the environment."},
    {"name": "clock", "description": "Print the time and random bytes."},
    {"name": "read", "description": "Read a file.", "input_schema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
    {"name": "write", "description": "Write a file.", "input_schema": {"type": "object", "required": ["path", "text"], "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}},
    {"name": "list", "description": "List a directory.", "input_schema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
    {"name": "raw", "description": "Copy the request to stdout without decoding it (measures the host's share of a call)."}
  ],
  "requests": {
    "fs": [{"guest": "/workspace", "access": "rw", "reason": "files"}, {"guest": "/extra", "access": "ro", "reason": "not granted in tests"}],
    "env": [{"key": "TZ", "reason": "time zone"}, {"key": "GREETING", "reason": "test"}],
    "clock": true, "random": true
  }
}`

type request struct {
	Tool      string `json:"tool"`
	Arguments args   `json:"arguments"`
	CallID    string `json:"call_id"`
}

// warm runs the JSON work of a call once on a sample before the request is
// read: a pre-started instance does it while it waits, so the real call
// finds encoding/json's caches filled.
func warm() {
	var r request
	_ = json.Unmarshal([]byte(`{"tool":"echo","arguments":{"text":"x","path":"y"},"call_id":"c"}`), &r)
	_ = json.NewEncoder(io.Discard).Encode(map[string]any{
		"content":  []map[string]string{{"type": "text", "text": r.Arguments.Text}},
		"is_error": false,
	})
}

type args struct {
	Text string `json:"text"`
	Path string `json:"path"`
}

func main() {
	switch os.Getenv("AGENTHOST_MODE") {
	case "describe":
		os.Stdout.WriteString(manifest)
		return
	case "call":
	default:
		fmt.Fprintln(os.Stderr, "echo: unknown AGENTHOST_MODE")
		os.Exit(2)
	}
	if os.Getenv("AGENTHOST_TOOL") == "raw" {
		io.Copy(os.Stdout, os.Stdin)
		return
	}
	var req request
	warm()
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "echo: bad request:", err)
		os.Exit(2)
	}
	if req.Tool != os.Getenv("AGENTHOST_TOOL") {
		fmt.Fprintln(os.Stderr, "echo: tool mismatch")
		os.Exit(2)
	}
	a := req.Arguments
	switch req.Tool {
	case "echo":
		result(a.Text+" (call "+req.CallID+")", false)
	case "plain":
		fmt.Print("plain: " + a.Text)
	case "fail":
		fmt.Print("it failed: " + a.Text)
		os.Exit(1)
	case "soft_fail":
		result("soft failure", true)
	case "env":
		env := os.Environ()
		sort.Strings(env)
		fmt.Print(strings.Join(env, "\n"))
	case "clock":
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(rand.Uint32())
		}
		fmt.Printf("%d %s", time.Now().UnixNano(), hex.EncodeToString(b))
	case "read":
		data, err := os.ReadFile(a.Path)
		if err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		os.Stdout.Write(data)
	case "write":
		if err := os.WriteFile(a.Path, []byte(a.Text), 0o644); err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		fmt.Print("wrote ", a.Path)
	case "list":
		entries, err := os.ReadDir(a.Path)
		if err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		for _, e := range entries {
			fmt.Println(e.Name())
		}
	}
}

func result(text string, isError bool) {
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"content":  []map[string]string{{"type": "text", "text": text}},
		"is_error": isError,
	})
}
