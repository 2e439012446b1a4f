package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// call and text build expected responses tersely.
func call(id, name, args string) loop.ToolCall {
	return loop.ToolCall{ID: id, Name: name, Arguments: args}
}

func toolStep(finish string, u loop.Usage, calls ...loop.ToolCall) loop.Response {
	return loop.Response{
		Message:      loop.Message{Role: loop.RoleAssistant, ToolCalls: calls},
		FinishReason: finish,
		Usage:        u,
	}
}

func textStep(text, finish string, u loop.Usage) loop.Response {
	return loop.Response{
		Message:      loop.Message{Role: loop.RoleAssistant, Content: text},
		FinishReason: finish,
		Usage:        u,
	}
}

func tokens(p, c int) loop.Usage {
	return loop.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// TestStreamWireQuirks feeds one server dialect per case, byte for byte as
// that server sends it, and checks the accumulated response.
func TestStreamWireQuirks(t *testing.T) {
	cases := []struct {
		name     string
		sse      string
		history  []loop.Message // before the user's prompt
		want     loop.Response
		wantText []string // fragments onText must see, when set
	}{
		{
			name: "openai fragmented, two interleaved calls",
			sse: `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"list_dir","arguments":""}}]},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.txt\"}"}}]},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\".\"}"}}]},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}

data: [DONE]

`,
			want: toolStep("tool_calls", tokens(12, 7),
				call("call_abc", "read_file", `{"path":"a.txt"}`),
				call("call_def", "list_dir", `{"path":"."}`)),
		},
		{
			name: "ollama whole call in one chunk",
			sse: `data: {"id":"chatcmpl-414","object":"chat.completion.chunk","created":1,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_k3j2lq8x","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"go.mod\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-414","object":"chat.completion.chunk","created":1,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-414","object":"chat.completion.chunk","created":1,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":20,"total_tokens":60}}

data: [DONE]

`,
			want: toolStep("tool_calls", tokens(40, 20), call("call_k3j2lq8x", "read_file", `{"path":"go.mod"}`)),
		},
		{
			name: "several whole calls in one delta, mistral ids without index",
			sse: `data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"mistral-small","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"mistral-small","choices":[{"index":0,"delta":{"tool_calls":[{"id":"D681PevKs","function":{"name":"read_file","arguments":"{\"path\": \"a\"}"}},{"id":"A7wQ2zX9p","function":{"name":"read_file","arguments":"{\"path\": \"b\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}}

data: [DONE]

`,
			want: toolStep("tool_calls", tokens(5, 4),
				call("D681PevKs", "read_file", `{"path": "a"}`),
				call("A7wQ2zX9p", "read_file", `{"path": "b"}`)),
		},
		{
			name: "gemini missing index, finish stop with calls, thought signature",
			sse: `data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"c2lnMQ=="}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"id":"function-call-1","type":"function"},{"function":{"arguments":"{\"city\":\"Rome\"}","name":"weather"},"id":"function-call-2","type":"function"}]},"finish_reason":"stop","index":0}],"created":1,"id":"x","model":"gemini-3-pro","object":"chat.completion.chunk","usage":{"completion_tokens":10,"prompt_tokens":20,"total_tokens":30}}

data: [DONE]

`,
			want: toolStep("stop", tokens(20, 10),
				loop.ToolCall{ID: "function-call-1", Name: "weather", Arguments: `{"city":"Paris"}`,
					Extra: json.RawMessage(`{"google":{"thought_signature":"c2lnMQ=="}}`)},
				call("function-call-2", "weather", `{"city":"Rome"}`)),
		},
		{
			name: "index starting at 1",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1a","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"x\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"call_2b","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{},
				call("call_1a", "read_file", `{"path":"x"}`),
				call("call_2b", "list_dir", `{}`)),
		},
		{
			name: "index -1 for every call (gateway in front of bedrock)",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"tooluse_A","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"tooluse_B","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"{\"path\":\"b\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{},
				call("tooluse_A", "read_file", `{"path":"a"}`),
				call("tooluse_B", "read_file", `{"path":"b"}`)),
		},
		{
			name: "id only on first delta, empty later, name empty later",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_first","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","type":"","function":{"name":"","arguments":"th\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"name":"","arguments":"\"a\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{}, call("call_first", "read_file", `{"path":"a"}`)),
		},
		{
			name: "id changing on every delta, name repeated on every delta",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a2","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a3","type":"function","function":{"name":"read_file","arguments":"\"a\"}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{}, call("a1", "read_file", `{"path":"a"}`)),
		},
		{
			name: "fresh id on every delta, name only on the first (vllm hermes)",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-1","type":"function","function":{"name":"read_file"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-2","function":{"arguments":"{\"path\": "}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-3","function":{"arguments":"\"a\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{}, call("chatcmpl-tool-1", "read_file", `{"path": "a"}`)),
		},
		{
			name: "repeated index for different calls (sglang)",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{},
				call("c1", "read_file", `{"path":"a"}`),
				call("c2", "read_file", `{"path":"b"}`)),
		},
		{
			name: "arguments as a JSON object (llama.cpp)",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"hGf0","type":"function","function":{"name":"read_file","arguments":{"path": "a.txt",  "n": 2}}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{}, call("hGf0", "read_file", `{"path":"a.txt","n":2}`)),
		},
		{
			name: "empty and missing arguments become {}",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"now","arguments":""}},{"index":1,"id":"c2","function":{"name":"pwd"}},{"index":2,"id":"c3","function":{"name":"ls","arguments":null}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{}, call("c1", "now", `{}`), call("c2", "pwd", `{}`), call("c3", "ls", `{}`)),
		},
		{
			name: "comments and keep-alives (openrouter, deepseek)",
			sse: `: OPENROUTER PROCESSING

: OPENROUTER PROCESSING

data: {"id":"gen-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}

: keep-alive

: keep-alive

data: {"id":"gen-1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}

data: [DONE]

`,
			want:     textStep("Hello", "stop", loop.Usage{}),
			wantText: []string{"Hel", "lo"},
		},
		{
			name: "event: and id: lines, data: without space",
			sse: `event: message
id: 1
data:{"choices":[{"index":0,"delta":{"content":"Hi"}}]}

event: message
id: 2
retry: 3000
data:{"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}

event: done
data: [DONE]

`,
			want: textStep("Hi!", "stop", loop.Usage{}),
		},
		{
			name: "no [DONE] after a finish reason",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":null}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}

`,
			want: textStep("done", "stop", tokens(3, 1)),
		},
		{
			name: "last line without newline",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}`,
			want: textStep("x", "stop", tokens(2, 1)),
		},
		{
			name: "usage-only chunk after the finish",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":null}

data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":2,"total_tokens":102}}

data: [DONE]

`,
			want: textStep("ok", "stop", tokens(100, 2)),
		},
		{
			name: "cumulative usage on every chunk: the last wins",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}

data: {"choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}

data: [DONE]

`,
			want: textStep("ab", "stop", tokens(9, 3)),
		},
		{
			name: "groq usage in x_groq",
			sse: `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"yo"},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01"}}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"x_groq":{"id":"req_01","usage":{"queue_time":0.01,"prompt_tokens":15,"prompt_time":0.001,"completion_tokens":2,"completion_time":0.002,"total_tokens":17,"total_time":0.003}}}

data: [DONE]

`,
			want: textStep("yo", "stop", tokens(15, 2)),
		},
		{
			name: "azure empty first chunk with prompt filter results",
			sse: `data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}

data: {"choices":[{"content_filter_results":{},"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o","object":"chat.completion.chunk"}

data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Hi"},"finish_reason":null,"index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o","object":"chat.completion.chunk"}

data: {"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o","object":"chat.completion.chunk"}

data: [DONE]

`,
			want: textStep("Hi", "stop", loop.Usage{}),
		},
		{
			name: "choices without delta",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}

data: {"choices":[{"index":0,"finish_reason":"stop"}]}

data: [DONE]

`,
			want: textStep("a", "stop", loop.Usage{}),
		},
		{
			name: "reasoning_content (deepseek) then a call",
			sse: `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Need the "}}]}

data: {"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"file."}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0_x","type":"function","function":{"name":"read_file","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: loop.Response{
				Message: loop.Message{Role: loop.RoleAssistant, Reasoning: "Need the file.",
					ToolCalls: []loop.ToolCall{call("call_0_x", "read_file", "{}")}},
				FinishReason: "tool_calls",
			},
		},
		{
			name: "reasoning (vllm, ollama) and both fields duplicated",
			sse: `data: {"choices":[{"index":0,"delta":{"reasoning":"Think"}}]}

data: {"choices":[{"index":0,"delta":{"reasoning":"ing.","reasoning_content":"ing."}}]}

data: {"choices":[{"index":0,"delta":{"content":"Answer"},"finish_reason":"stop"}]}

data: [DONE]

`,
			want: loop.Response{
				Message:      loop.Message{Role: loop.RoleAssistant, Content: "Answer", Reasoning: "Thinking."},
				FinishReason: "stop",
			},
		},
		{
			name: "content as parts with thinking (mistral magistral)",
			sse: `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm, "}]}]}}]}

data: {"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"easy."}]}]}}]}

data: {"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Four"}]}}]}

data: {"choices":[{"index":0,"delta":{"content":"."},"finish_reason":"stop"}]}

data: [DONE]

`,
			want: loop.Response{
				Message:      loop.Message{Role: loop.RoleAssistant, Content: "Four.", Reasoning: "Hmm, easy."},
				FinishReason: "stop",
			},
			wantText: []string{"Four", "."},
		},
		{
			name: "odd types: numeric id, string index, string usage",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","id":7,"type":"function","function":{"name":"read_file","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":"5","completion_tokens":2.0}}

data: [DONE]

`,
			want: toolStep("tool_calls", tokens(5, 2), call("7", "read_file", "{}")),
		},
		{
			name: "escaped and unicode text",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"line1\nline2 \"q\" \u00e9 ü"},"finish_reason":"stop"}]}

data: [DONE]

`,
			want: textStep("line1\nline2 \"q\" é ü", "stop", loop.Usage{}),
		},
		{
			name: "finish tool_calls with no calls (vllm) is a text step",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"Just text"},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: textStep("Just text", "tool_calls", loop.Usage{}),
		},
		{
			name: "length finish truncates the calls",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"content\":\"aaaa"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}

data: [DONE]

`,
			want: func() loop.Response {
				r := toolStep("length", loop.Usage{}, call("c1", "write_file", `{"content":"aaaa`))
				r.Truncated = true
				return r
			}(),
		},
		{
			name: "unparsable arguments under finish tool_calls (vllm) truncate",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: func() loop.Response {
				r := toolStep("tool_calls", loop.Usage{}, call("c1", "read_file", `{"path": "a`))
				r.Truncated = true
				return r
			}(),
		},
		{
			name: "ids repeating across responses get fresh ids",
			history: []loop.Message{
				{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{call("0", "read_file", "{}")}},
				{Role: loop.RoleTool, ToolCallID: "0", Content: "x"},
			},
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"0","type":"function","function":{"name":"read_file","arguments":"{}"}},{"index":1,"id":"1","type":"function","function":{"name":"read_file","arguments":"{}"}},{"index":2,"function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`,
			want: toolStep("tool_calls", loop.Usage{},
				call("call00002", "read_file", "{}"), call("1", "read_file", "{}"), call("call00003", "ls", "{}")),
		},
		{
			name: "cached prompt tokens (OpenAI prompt_tokens_details, DeepSeek prompt_cache_hit_tokens)",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105,"prompt_tokens_details":{"cached_tokens":"64"}}}

data: [DONE]

`,
			want: textStep("hi", "stop", loop.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105, CachedTokens: 64}),
		},
		{
			name: "cached prompt tokens as DeepSeek sends them, never above the prompt",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_cache_hit_tokens":90}}

data: [DONE]

`,
			want: textStep("hi", "stop", loop.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CachedTokens: 10}),
		},
		{
			name: "server ignoring stream:true answers one JSON completion",
			sse: `{
  "id": "chatcmpl-9",
  "object": "chat.completion",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
    "tool_calls": [{"id": "call_j", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]},
    "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 8, "completion_tokens": 4, "total_tokens": 12}
}
`,
			want: toolStep("tool_calls", tokens(8, 4), call("call_j", "read_file", `{"path":"a"}`)),
		},
		{
			name: "unreadable chunk is skipped",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}

data: {"choices":[{"index":0,"delta":{"content":

data: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}

data: [DONE]

`,
			want: textStep("ab", "stop", loop.Usage{}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, sse(tc.sse))
			var got []string
			req := loop.Request{Messages: append(append([]loop.Message{}, tc.history...), loop.Message{Role: loop.RoleUser, Content: "go"})}
			resp, err := s.provider(Options{}).Stream(context.Background(), req, func(s string) { got = append(got, s) })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			diff(t, resp, tc.want)
			if tc.wantText != nil {
				diff(t, got, tc.wantText)
			}
			if strings.Join(got, "") != tc.want.Message.Content {
				t.Errorf("onText saw %q, content is %q", strings.Join(got, ""), tc.want.Message.Content)
			}
		})
	}
}

// TestConcurrentStreams: one Provider serves concurrent runs (subagents).
func TestConcurrentStreams(t *testing.T) {
	s := newServer(t, sse(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`))
	p := s.provider(Options{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			resp, err := p.Stream(context.Background(), ask("go"), nil)
			if err == nil && (len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != "c1") {
				err = fmt.Errorf("unexpected response %+v", resp)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
