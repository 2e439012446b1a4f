// Command nap is an agenthost/1 test plugin with one slow tool: nap sleeps
// the milliseconds it is asked (the plugin block must grant the real
// clock), then says so with the call's number. The fan-out test calls it
// thousands of times from one response. It uses no fmt or encoding/json,
// so that each call's instance starts quickly. Built by the tests with
// internal/wasmbuild.
package main

import (
	"io"
	"os"
	"strconv"
	"time"
)

const manifest = `{
  "protocol": "agenthost/1", "name": "nap", "version": "0.1.0",
  "description": "test plugin: a slow tool",
  "tools": [
    {"name": "nap", "description": "Sleep ms milliseconds.",
     "input_schema": {"type": "object", "required": ["ms"], "properties": {"ms": {"type": "integer"}, "i": {"type": "integer"}}}}
  ],
  "requests": {"clock": true}
}`

// number returns the whole number after "key": in req, or -1.
func number(req []byte, key string) int {
	k := `"` + key + `":`
	for i := 0; i+len(k) <= len(req); i++ {
		if string(req[i:i+len(k)]) != k {
			continue
		}
		j := i + len(k)
		for j < len(req) && req[j] == ' ' {
			j++
		}
		n, start := 0, j
		for j < len(req) && req[j] >= '0' && req[j] <= '9' {
			n = n*10 + int(req[j]-'0')
			j++
		}
		if j > start {
			return n
		}
	}
	return -1
}

func main() {
	if os.Getenv("AGENTHOST_MODE") == "describe" {
		os.Stdout.WriteString(manifest)
		return
	}
	req, err := io.ReadAll(os.Stdin)
	ms, i := number(req, "ms"), number(req, "i")
	if err != nil || ms < 0 {
		os.Stdout.WriteString("nap: want {\"ms\": N}")
		os.Exit(1)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	os.Stdout.WriteString("napped " + strconv.Itoa(ms) + " ms (call " + strconv.Itoa(i) + ")")
}
