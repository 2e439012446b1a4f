package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// stream200 is a 200-chunk stream as OpenAI sends it: 150 text chunks, then
// a tool call whose arguments arrive in 48 fragments, a finish chunk and a
// usage chunk.
func stream200() string {
	var b strings.Builder
	const pre = `data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,`
	for i := range 150 {
		fmt.Fprintf(&b, "%s\"delta\":{\"content\":\"word%d \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", pre, i)
	}
	fmt.Fprintf(&b, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_bench\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n", pre)
	fmt.Fprintf(&b, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"text\\\":\\\"\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n", pre)
	for i := range 45 {
		fmt.Fprintf(&b, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"line %d\\\\n\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n", pre, i)
	}
	fmt.Fprintf(&b, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n", pre)
	fmt.Fprintf(&b, "%s\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n", pre)
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// BenchmarkStream200Chunks measures one Stream call over a 200-chunk event
// stream served from memory: request building, go-openai, the normaliser,
// chunk decoding and accumulation; no sockets.
func BenchmarkStream200Chunks(b *testing.B) {
	body := stream200()
	if n := strings.Count(body, "data: {"); n != 200 {
		b.Fatalf("fixture has %d chunks, want 200", n)
	}
	p := New(Options{BaseURL: "http://bench.local/v1", ModelID: "gpt-4o",
		HTTPClient: &http.Client{Transport: memTransport{body: []byte(body)}}})
	req := ask("write it")
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var resp loop.Response
	for b.Loop() {
		var err error
		resp, err = p.Stream(ctx, req, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Truncated || resp.Usage.TotalTokens != 1200 {
		b.Fatalf("unexpected response: %+v", resp)
	}
}
