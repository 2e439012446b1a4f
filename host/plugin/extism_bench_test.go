package plugin

import (
	"context"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// BenchmarkCallExtism measures a call of go-sdk's count_vowels.wasm (a
// plain-exports Extism plugin, TinyGo) end to end, on a fresh instance
// (cold) and on a pre-started one (warm), to compare with
// BenchmarkCallAgenthost and BenchmarkCallWASICLI; mcp_warm is a call of
// our mcp.run plugin (big-Go, describe/call) on a pre-started instance.
func BenchmarkCallExtism(b *testing.B) {
	for _, mode := range []struct {
		name     string
		prestart bool
		mcp      bool
	}{{"cold", false, false}, {"warm", true, false}, {"mcp_cold", false, true}, {"mcp_warm", true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			r := newRuntime(b)
			s := extismSpec(b, "vowels", sdkWasm(b, "count_vowels.wasm"), inputTool("count_vowels", ""))
			c := loop.ToolCall{ID: "b", Name: "count_vowels", Arguments: `{"text":"hello world"}`}
			if mode.mcp {
				s = extismSpec(b, "mcp", mcpPlugin(b, "v1"))
				c = loop.ToolCall{ID: "b", Name: "greet", Arguments: `{"name":"bench"}`}
			}
			p := load(b, r, s)
			p.SetPrestart(mode.prestart)
			ctx := context.Background()
			if _, err := p.Call(ctx, c); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if mode.prestart {
					b.StopTimer()
					waitReady(b, p, c.Name)
					b.StartTimer()
				}
				res, err := p.Call(ctx, c)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
