// Package mcptest is the MCP server of agenthost's tests, made with the
// official Go SDK: host/mcpuse's tests and the script tests of
// cmd/agenthost run it as a stdio server.
package mcptest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve serves on stdin/stdout until stdin closes and returns the exit
// code. Modes: "tools" serves the tools of serveTools; "hang-init" never
// answers; "garbage-init" answers everything with garbage.
func Serve(mode string) int {
	switch mode {
	case "tools":
		serveTools()
	case "hang-init":
		select {}
	case "garbage-init":
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				return 0
			}
			os.Stdout.WriteString("}{ this is not JSON-RPC\n")
		}
	default:
		fmt.Fprintf(os.Stderr, "mcptest: unknown mode %q (tools, hang-init, garbage-init)\n", mode)
		return 2
	}
	return 0
}

// serveTools serves echo (echoes its arguments), fail (an error result),
// pid (the server's process id), hang (never answers), crash (exits
// mid-call) and garbage (writes garbage on stdout, then hangs). It says
// "mcptest server ready" on stderr.
func serveTools() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("echo: " + strings.Trim(string(req.Params.Arguments), "{}")), nil
	})
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Fail.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("failed on purpose")
		r.IsError = true
		return r, nil
	})
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "The server's process id.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	srv.AddTool(&mcp.Tool{Name: "hang", Description: "Never answer.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {} // ignores cancellation too
	})
	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Exit mid-call.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	srv.AddTool(&mcp.Tool{Name: "garbage", Description: "Write garbage on stdout.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Stdout.WriteString("}{ not JSON-RPC\n")
		select {}
	})
	fmt.Fprintln(os.Stderr, "mcptest server ready")
	srv.Run(context.Background(), &mcp.StdioTransport{})
}
