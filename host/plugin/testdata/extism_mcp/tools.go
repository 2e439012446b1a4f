package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const tools = `{"tools":[
 {"name":"greet","description":"Greet someone","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},
 {"name":"config","description":"Read a config key","inputSchema":{"type":"object","properties":{"key":{"type":"string"}}}},
 {"name":"image","description":"Return an image","inputSchema":{"type":"object"}},
 {"name":"soft_fail","description":"An isError result","inputSchema":{"type":"object"}},
 {"name":"fetch","description":"GET a URL","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}},
 {"name":"read","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}},
 {"name":"spin","description":"Loop forever","inputSchema":{"type":"object"}},
 {"name":"bomb","description":"Allocate without end","inputSchema":{"type":"object"}},
 {"name":"kernel_bomb","description":"Allocate Extism memory without end","inputSchema":{"type":"object"}},
 {"name":"flood","description":"Write to stdout without end","inputSchema":{"type":"object"}},
 {"name":"panic","description":"Panic","inputSchema":{"type":"object"}},
 {"name":"count","description":"Count the calls this instance served","inputSchema":{"type":"object"}}
]}`

func text(s string, isError bool) []byte {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isError})
	return b
}

var sink [][]byte

// extra runs the tools a build tag adds (listchanged.go).
var extra = func(string) ([]byte, bool) { return nil, false }

// calls counts the calls of count on this instance: 1 every time on fresh
// instances, 1, 2, 3... on a reused one.
var calls int

// run calls the tool name with its arguments and returns a CallToolResult.
func run(name string, args map[string]string) []byte {
	if b, ok := extra(name); ok {
		return b
	}
	switch name {
	case "greet":
		return text("hello, "+args["name"], false)
	case "config":
		return text(string(get(configGet(put([]byte(args["key"]))))), false)
	case "image":
		b, _ := json.Marshal(map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "here it is"},
			map[string]any{"type": "image", "mimeType": "image/png", "data": strings.Repeat("QUJD", 1000)},
		}})
		return b
	case "soft_fail":
		return text("it went wrong", true)
	case "fetch":
		req, _ := json.Marshal(map[string]string{"url": args["url"], "method": "GET"})
		body := get(httpRequest(put(req), 0))
		return text(fmt.Sprintf("%d %s", httpStatusCode(), body), false)
	case "read":
		b, err := os.ReadFile(args["path"])
		if err != nil {
			return text(err.Error(), true)
		}
		return text(string(b), false)
	case "spin":
		for {
		}
	case "bomb":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "kernel_bomb":
		for {
			alloc(1 << 20)
		}
	case "flood":
		for {
			os.Stdout.WriteString(strings.Repeat("x", 4096))
		}
	case "panic":
		panic("boom")
	case "count":
		calls++
		return text(fmt.Sprint(calls), false)
	}
	return text("no tool "+name, true)
}
