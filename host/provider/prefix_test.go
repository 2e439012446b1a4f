package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestPrefixCacheBodies: a provider that keeps encoded history prefixes
// sends, request after request, byte for byte the body a fresh provider
// (empty cache) sends for the same history: while the history grows, after
// an earlier message changed (a new slice, as compaction makes), after a
// message was changed in place in the caller's slice, and when duplicate
// tool-call ids turn the cache off.
func TestPrefixCacheBodies(t *testing.T) {
	s := newServer(t, sse(doneStream))
	cached := s.provider(Options{})
	ctx := context.Background()
	send := func(step string, hist []loop.Message) {
		t.Helper()
		req := loop.Request{Messages: hist, Tools: []loop.ToolSpec{{Name: "echo", Description: "Echo."}}}
		if _, err := cached.Stream(ctx, req, nil); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if _, err := s.provider(Options{}).Stream(ctx, req, nil); err != nil {
			t.Fatalf("%s (fresh): %v", step, err)
		}
		s.mu.Lock()
		got, want := s.bodies[len(s.bodies)-2], s.bodies[len(s.bodies)-1]
		s.mu.Unlock()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: body with the cache differs from a fresh encoding\n got: %s\nwant: %s", step, got, want)
		}
	}
	call := func(id, args string, extra json.RawMessage) []loop.Message {
		return []loop.Message{
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: id, Name: "echo", Arguments: args, Extra: extra}}},
			{Role: loop.RoleTool, ToolCallID: id, Name: "echo", Content: "result of " + id + " <&>\u2028"},
		}
	}
	hist := []loop.Message{{Role: loop.RoleSystem, Content: "You echo."}, {Role: loop.RoleUser, Content: "go"}}
	send("first", hist)
	hist = append(hist, call("call_1", `{"text":"a"}`, json.RawMessage(`{"google": {"thought_signature": "x"}}`))...)
	send("grown", hist)
	hist = append(hist, call("call_2", `{"text":"b"}`, nil)...)
	send("grown again", hist)
	if n := len(cached.prefixes.entries); n != 1 {
		t.Fatalf("%d cached prefixes after one history's requests, want 1", n)
	}

	changed := append([]loop.Message(nil), hist...)
	changed[1].Content = "go on"
	send("earlier message changed", changed)

	changed[2].ToolCalls[0].Arguments = `{"text":"changed in place"}`
	changed[2].ToolCalls[0].Extra[3] = 'G' // a byte of the extra content
	send("tool call changed in place", changed)

	dup := append(append([]loop.Message(nil), changed...), call("call_1", `{}`, nil)...)
	send("duplicate id", dup)
	dup = append(dup, loop.Message{Role: loop.RoleUser, Content: "more"})
	send("duplicate id, grown", dup)
}

// TestPrefixCacheBounds: the cache follows at most maxPrefixes histories,
// keeps within its byte budget by dropping the oldest, and does not keep an
// entry over a quarter of the budget.
func TestPrefixCacheBounds(t *testing.T) {
	var c prefixCache
	for i := range maxPrefixes + 10 {
		c.put(&encodedPrefix{msgs: []loop.Message{{Role: loop.RoleUser, Content: string(rune('a' + i%26))}}, enc: make([]byte, 10)})
	}
	if len(c.entries) != maxPrefixes || c.bytes != 20*maxPrefixes {
		t.Fatalf("%d entries, %d bytes; want %d and %d", len(c.entries), c.bytes, maxPrefixes, 20*maxPrefixes)
	}
	c.put(&encodedPrefix{msgs: []loop.Message{{Role: loop.RoleUser}}, enc: make([]byte, maxPrefixBytes/8+1)})
	if len(c.entries) != maxPrefixes {
		t.Fatalf("an oversized encoding was kept: %d entries", len(c.entries))
	}
	// Big entries push the oldest out to stay within the byte budget.
	big := maxPrefixBytes/8 - 100
	for range 5 {
		c.put(&encodedPrefix{msgs: []loop.Message{{Role: loop.RoleUser}}, enc: make([]byte, big)})
	}
	if c.bytes > maxPrefixBytes || len(c.entries) >= maxPrefixes {
		t.Fatalf("%d bytes in %d entries after big ones, over the budget of %d", c.bytes, len(c.entries), maxPrefixBytes)
	}
	if e := c.take([]loop.Message{{Role: loop.RoleUser, Content: "zz"}}); e != nil {
		t.Fatalf("took %+v for a history no entry starts", e.msgs)
	}
}

// TestPrefixCacheConcurrent: histories growing at the same time through one
// provider each get their own messages (run with -race).
func TestPrefixCacheConcurrent(t *testing.T) {
	cached := New(Options{ModelID: "m"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hist := []loop.Message{{Role: loop.RoleSystem, Content: "sys"}, {Role: loop.RoleUser, Content: fmt.Sprint("run ", g)}}
			for step := range 20 {
				id := fmt.Sprintf("call_%d_%d", g, step)
				hist = append(hist,
					loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: id, Name: "echo", Arguments: `{}`}}},
					loop.Message{Role: loop.RoleTool, ToolCallID: id, Content: id})
				_, got, gotIDs, gotN, err := cached.buildRequest(loop.Request{Messages: hist})
				if err != nil {
					t.Error(err)
					return
				}
				gotMsgs := string(got.messages)
				gotIDs = maps.Clone(gotIDs)
				cached.prefixes.put(got.prefix)
				_, want, wantIDs, wantN, _ := New(Options{ModelID: "m"}).buildRequest(loop.Request{Messages: hist})
				if gotMsgs != string(want.messages) {
					t.Errorf("run %d step %d: messages\n%s\nwant\n%s", g, step, gotMsgs, want.messages)
					return
				}
				if !maps.Equal(gotIDs, wantIDs) || gotN != wantN {
					t.Errorf("run %d step %d: history ids %v (%d calls), want %v (%d)", g, step, gotIDs, gotN, wantIDs, wantN)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPrefixCacheResponseIDs: a streamed call whose id the history already
// holds gets a fresh id, the same whether the history's ids come from a
// prefix-cache entry or not, and the entry's ids are not changed by it.
func TestPrefixCacheResponseIDs(t *testing.T) {
	s := newServer(t, sse("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	p := s.provider(Options{})
	hist := []loop.Message{
		{Role: loop.RoleUser, Content: "go"},
		{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "call_1", Name: "echo", Arguments: `{}`}}},
		{Role: loop.RoleTool, ToolCallID: "call_1", Content: "ok"},
	}
	for i := range 3 {
		resp, err := p.Stream(context.Background(), loop.Request{Messages: hist}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != "call00002" {
			t.Fatalf("request %d: calls %+v, want one with id call00002", i, resp.Message.ToolCalls)
		}
		e := p.prefixes.take(hist)
		if e == nil {
			t.Fatalf("request %d: no cache entry", i)
		}
		if len(e.ids) != 1 || !e.ids["call_1"] {
			t.Fatalf("request %d: entry ids %v, want only call_1", i, e.ids)
		}
		p.prefixes.put(e)
	}
}
