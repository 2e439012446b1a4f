package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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

// fakeStep is one step's answer as internal/fakemodel streams it: a role
// chunk, the call's name, its arguments in three fragments, the finish
// chunk and [DONE], each event flushed on its own.
func fakeStep(n int) []string {
	pre := fmt.Sprintf(`data: {"id":"chatcmpl-fake-%d","object":"chat.completion.chunk","created":1700000000,"model":"fake-model","choices":[{"index":0,"delta":`, n)
	return []string{
		pre + `{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n",
		pre + fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d_1","type":"function","function":{"name":"count_vowels","arguments":""}}]},"finish_reason":null}]}`, n) + "\n\n",
		pre + `{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]},"finish_reason":null}]}` + "\n\n",
		pre + fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":"\"step %d"}}]},"finish_reason":null}]}`, n) + "\n\n",
		pre + `{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"finish_reason":null}]}` + "\n\n",
		pre + `{},"finish_reason":"tool_calls"}]}` + "\n\n",
		"data: [DONE]\n\n",
	}
}

// stepHistory is the history of step k (0-based) of a run like
// host's BenchmarkRunSteps with the Extism tool: system prompt, user
// prompt, then k tool calls and their results.
func stepHistory(all []loop.Message, k int) []loop.Message { return all[:2+2*k] }

func runHistory(steps int) []loop.Message {
	msgs := []loop.Message{
		{Role: loop.RoleSystem, Content: "You are a benchmark agent.\n\nAnswer briefly."},
		{Role: loop.RoleUser, Content: "Call the tool, once per step."},
	}
	for i := 1; i <= steps; i++ {
		id := fmt.Sprintf("call_%d_1", i)
		msgs = append(msgs,
			loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: id, Name: "count_vowels", Arguments: fmt.Sprintf(`{"text":"step %d"}`, i)}}},
			loop.Message{Role: loop.RoleTool, ToolCallID: id, Name: "count_vowels", Content: fmt.Sprintf(`{"count":%d,"total":%d,"vowels":"aeiouAEIOU"}`, i%3+1, i%3+1)})
	}
	return msgs
}

var countVowels = loop.ToolSpec{
	Name:        "count_vowels",
	Description: "Count the vowels in a text.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
}

// BenchmarkStep measures whole steps against a loopback HTTP server that
// answers as internal/fakemodel does, over the histories of a 200-step run
// (each iteration is the next step; a new run every 200). Besides wall
// time it reports the process's CPU time per step (cpu-ns/op: client and
// server, user and system), which the machine's load disturbs less.
func BenchmarkStep(b *testing.B) {
	const steps = 200
	answers := make([][]string, steps)
	for i := range answers {
		answers[i] = fakeStep(i + 1)
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := served.Add(1) - 1
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for _, ev := range answers[n%steps] {
			io.WriteString(w, ev)
			fl.Flush()
		}
	}))
	defer srv.Close()
	p := New(Options{BaseURL: srv.URL + "/v1", ModelID: "fake-model"})
	all := runHistory(steps)
	tools := []loop.ToolSpec{countVowels}
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	i := 0
	for b.Loop() {
		k := i % steps
		i++
		resp, err := p.Stream(ctx, loop.Request{Messages: stepHistory(all, k), Tools: tools}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != fmt.Sprintf(`{"text":"step %d"}`, k+1) {
			b.Fatalf("step %d: unexpected response %+v", k, resp)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
