package cassette

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// BenchmarkCanonicalKey measures keying a 50-message request with tools.
func BenchmarkCanonicalKey(b *testing.B) {
	req := loop.Request{Tools: tools}
	req.Messages = append(req.Messages, loop.Message{Role: loop.RoleSystem, Content: strings.Repeat("system prompt ", 100)})
	for i := range 24 {
		id := fmt.Sprintf("wire_%d", i)
		req.Messages = append(req.Messages,
			loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
			loop.Message{Role: loop.RoleTool, ToolCallID: id, Content: strings.Repeat("file text ", 200)})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Canonical("m", req).Key()
	}
}
