package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start runs a server for the script and closes it when the test ends.
func start(t *testing.T, script string) *Server {
	t.Helper()
	replies, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	s, err := Start(replies)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

const streamBody = `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// testChunk is the client's view of a chunk.
type testChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			Reasoning string  `json:"reasoning_content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// sse reads a whole SSE body: the chunks, whether [DONE] ended it, and the
// read error (nil at a clean end).
func sse(t *testing.T, r io.Reader) (chunks []testChunk, done bool, err error) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("unexpected SSE line %q", line)
		}
		if done {
			t.Fatalf("data after [DONE]: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c testChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	return chunks, done, sc.Err()
}

// assembled is a response put back together from its chunks.
type assembled struct {
	text, reasoning, finish string
	calls                   []assembledCall
	usage                   *Usage
	contentChunks           int
}

type assembledCall struct{ id, name, args string }

func assemble(t *testing.T, chunks []testChunk) assembled {
	t.Helper()
	var a assembled
	for _, c := range chunks {
		if c.Object != "chat.completion.chunk" || c.ID == "" {
			t.Errorf("chunk id %q object %q", c.ID, c.Object)
		}
		if c.Usage != nil {
			if len(c.Choices) != 0 {
				t.Errorf("usage chunk has %d choices, want 0", len(c.Choices))
			}
			a.usage = c.Usage
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			if d.Content != nil && *d.Content != "" {
				a.text += *d.Content
				a.contentChunks++
			}
			a.reasoning += d.Reasoning
			for _, tc := range d.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index")
				}
				i := *tc.Index
				if i == len(a.calls) {
					if tc.ID == "" || tc.Function.Name == "" || tc.Type != "function" {
						t.Errorf("first delta of call %d: id %q name %q type %q", i, tc.ID, tc.Function.Name, tc.Type)
					}
					a.calls = append(a.calls, assembledCall{id: tc.ID, name: tc.Function.Name})
				} else if i != len(a.calls)-1 {
					t.Fatalf("tool call index %d out of order", i)
				} else if tc.ID != "" || tc.Function.Name != "" {
					t.Errorf("later delta of call %d repeats id/name", i)
				}
				if tc.Function.Arguments != nil {
					a.calls[i].args += *tc.Function.Arguments
				}
			}
			if ch.FinishReason != nil {
				if a.finish != "" {
					t.Errorf("second finish_reason %q", *ch.FinishReason)
				}
				a.finish = *ch.FinishReason
			}
		}
	}
	return a
}

func TestStreamText(t *testing.T) {
	s := start(t, `{"text": "The quick brown fox jumps over the lazy dog.", "reasoning": "think first"}`)
	resp := post(t, s, streamBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	chunks, done, err := sse(t, resp.Body)
	if err != nil || !done {
		t.Fatalf("stream ended with err %v, done %v", err, done)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk role %q, want assistant", chunks[0].Choices[0].Delta.Role)
	}
	if chunks[0].Model != "m1" {
		t.Errorf("model %q, want the request's m1", chunks[0].Model)
	}
	a := assemble(t, chunks)
	if a.text != "The quick brown fox jumps over the lazy dog." {
		t.Errorf("text %q", a.text)
	}
	if a.contentChunks != 5 {
		t.Errorf("text came in %d chunks, want 5 (two words each)", a.contentChunks)
	}
	if a.reasoning != "think first" || a.finish != "stop" || a.usage != nil || len(a.calls) != 0 {
		t.Errorf("reasoning %q finish %q usage %v calls %v", a.reasoning, a.finish, a.usage, a.calls)
	}
}

// TestChunkDelayAndURLs: a paced stream takes at least its pauses and is
// otherwise the same stream; the request URI (path and query) is recorded.
func TestChunkDelayAndURLs(t *testing.T) {
	s := start(t, `{"text": "one two three four", "chunk_delay": "20ms"}`)
	started := time.Now()
	resp, err := http.Post(s.URL()+"/chat/completions?api-version=1&k=v", "application/json", strings.NewReader(streamBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	chunks, done, err := sse(t, resp.Body)
	if err != nil || !done {
		t.Fatalf("stream ended with err %v, done %v", err, done)
	}
	// role, two text chunks, finish: four pauses
	if d := time.Since(started); d < 80*time.Millisecond {
		t.Errorf("stream took %v, want at least 4 × 20ms", d)
	}
	if a := assemble(t, chunks); a.text != "one two three four" {
		t.Errorf("text %q", a.text)
	}
	if got, want := s.URLs(), []string{"POST /v1/chat/completions?api-version=1&k=v"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("URLs() = %q, want %q", got, want)
	}
	if got, want := s.Addr(), strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://"), "/v1"); got != want || !strings.HasPrefix(got, "127.0.0.1:") {
		t.Errorf("Addr() = %q", got)
	}
}

func TestStreamToolCalls(t *testing.T) {
	s := start(t, `{"text": "Let me look.", "tool_calls": [{"name": "read_file", "arguments": {"path": "dir/é.txt", "limit": 10}}, {"name": "list_dir"}, {"name": "bad", "arguments": "{\"path\": ", "id": "x9"}], "usage": {"prompt_tokens": 100, "completion_tokens": 7}}
{"tool_calls": [{"name": "read_file", "arguments": {}}], "finish_reason": "stop"}`)
	for i, want := range []struct {
		finish string
		calls  []assembledCall
		usage  *Usage
	}{
		{"tool_calls", []assembledCall{
			{"call_1_1", "read_file", `{"path":"dir/é.txt","limit":10}`},
			{"call_1_2", "list_dir", `{}`},
			{"x9", "bad", `{"path": `},
		}, &Usage{PromptTokens: 100, CompletionTokens: 7, TotalTokens: 107}},
		{"stop", []assembledCall{{"call_2_1", "read_file", `{}`}}, nil},
	} {
		resp := post(t, s, streamBody)
		chunks, done, err := sse(t, resp.Body)
		if err != nil || !done {
			t.Fatalf("reply %d: err %v done %v", i+1, err, done)
		}
		a := assemble(t, chunks)
		if a.finish != want.finish {
			t.Errorf("reply %d: finish %q, want %q", i+1, a.finish, want.finish)
		}
		if fmt.Sprint(a.calls) != fmt.Sprint(want.calls) {
			t.Errorf("reply %d: calls\n got %v\nwant %v", i+1, a.calls, want.calls)
		}
		if fmt.Sprint(a.usage) != fmt.Sprint(want.usage) {
			t.Errorf("reply %d: usage %v, want %v", i+1, a.usage, want.usage)
		}
		if i == 0 {
			if c := chunks[len(chunks)-1]; c.Usage == nil {
				t.Errorf("last chunk is not the usage chunk")
			}
			// Arguments come in several fragments.
			frags := 0
			for _, c := range chunks {
				for _, ch := range c.Choices {
					for _, tc := range ch.Delta.ToolCalls {
						if *tc.Index == 0 && tc.Function.Arguments != nil && *tc.Function.Arguments != "" {
							frags++
						}
					}
				}
			}
			if frags != 3 {
				t.Errorf("first call's arguments came in %d fragments, want 3", frags)
			}
		}
	}
}

func TestStatusReplies(t *testing.T) {
	s := start(t, `{"status": 429, "headers": {"Retry-After": "0"}}
{"status": 400, "body": {"error": {"message": "bad schema", "type": "invalid_request_error", "code": "x"}}}
{"status": 502, "body": "<html>bad gateway</html>"}`)
	cases := []struct {
		status     int
		header     string
		body, ctyp string
	}{
		{429, "0", `{"error":{"message":"fakemodel: HTTP 429","type":"rate_limit_error"}}`, "application/json"},
		{400, "", `{"error": {"message": "bad schema", "type": "invalid_request_error", "code": "x"}}`, "application/json"},
		{502, "", `<html>bad gateway</html>`, "text/plain; charset=utf-8"},
	}
	for _, c := range cases {
		resp := post(t, s, streamBody)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != c.header || string(body) != c.body || resp.Header.Get("Content-Type") != c.ctyp {
			t.Errorf("got %d Retry-After %q type %q body %s\nwant %d %q %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body, c.status, c.header, c.ctyp, c.body)
		}
	}
}

func TestRawReply(t *testing.T) {
	raw := ": keep-alive\n\nevent: x\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}"
	b, _ := json.Marshal(map[string]string{"raw": raw})
	s := start(t, string(b))
	resp := post(t, s, streamBody)
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || string(body) != raw {
		t.Errorf("status %d err %v body %q, want %q", resp.StatusCode, err, body, raw)
	}
}

func TestCutReply(t *testing.T) {
	s := start(t, `{"text": "partial answer here", "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}], "cut": true}
{"text": "next"}`)
	resp := post(t, s, streamBody)
	chunks, done, err := sse(t, resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error %v, want unexpected EOF", err)
	}
	a := assemble(t, chunks)
	if done || a.finish != "" || a.text != "partial answer here" || len(a.calls) != 1 || a.calls[0].args != `{"path":"a"}` {
		t.Errorf("done %v finish %q text %q calls %v", done, a.finish, a.text, a.calls)
	}
	// The server goes on serving the next reply.
	resp = post(t, s, streamBody)
	chunks, done, err = sse(t, resp.Body)
	if err != nil || !done || assemble(t, chunks).text != "next" {
		t.Errorf("after a cut: err %v done %v", err, done)
	}
}

// readFirstContent reads SSE lines until a chunk with non-empty content.
func readFirstContent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read before the first content: %v", err)
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var c testChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
			return *c.Choices[0].Delta.Content
		}
	}
}

func TestHangUntilClientCancels(t *testing.T) {
	s := start(t, `{"text": "thinking about it", "hang": true}
{"text": "after"}`)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", strings.NewReader(streamBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if got := readFirstContent(t, br); got != "thinking about " {
		t.Errorf("first content %q", got)
	}
	cancel()
	if _, err := io.ReadAll(br); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v, want context.Canceled", err)
	}
	resp.Body.Close()
	// The hanging handler returned: the next reply is served and Close
	// (in Cleanup) does not block.
	resp = post(t, s, streamBody)
	chunks, done, err := sse(t, resp.Body)
	if err != nil || !done || assemble(t, chunks).text != "after" {
		t.Errorf("after a hang: err %v done %v", err, done)
	}
}

func TestHangUntilServerCloses(t *testing.T) {
	s := start(t, `{"hang": true}`)
	resp := post(t, s, streamBody)
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the role chunk
		t.Fatal(err)
	}
	s.Close() // must release the handler, or the test times out
	if _, err := io.ReadAll(br); err == nil {
		t.Errorf("stream ended cleanly after Close, want an error")
	}
}

func TestHoldUntilRelease(t *testing.T) {
	s := start(t, `{"text": "held answer", "hold": true}
{"text": "also held", "hold": true}`)
	resp := post(t, s, streamBody)
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the role chunk
		t.Fatal(err)
	}
	// The rest of the stream is read in the background: it cannot end
	// before Release.
	type result struct {
		rest []byte
		err  error
	}
	rest := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(br)
		rest <- result{b, err}
	}()
	select {
	case r := <-rest:
		t.Fatalf("stream ended before Release: %q, %v", r.rest, r.err)
	default:
	}
	s.Release()
	r := <-rest
	if r.err != nil {
		t.Fatal(r.err)
	}
	chunks, done, err := sse(t, bytes.NewReader(r.rest))
	if err != nil || !done || assemble(t, chunks).text != "held answer" {
		t.Errorf("after Release: text %q, done %v, err %v", assemble(t, chunks).text, done, err)
	}
	// A hold after Release does not wait.
	chunks, done, err = sse(t, post(t, s, streamBody).Body)
	if err != nil || !done || assemble(t, chunks).text != "also held" {
		t.Errorf("second hold: done %v, err %v", done, err)
	}
}

func TestRepeatAndExhausted(t *testing.T) {
	s := start(t, `# two replies, the first twice
{"text": "a", "repeat": 2}

{"text": "b"}`)
	if n := s.Remaining(); n != 3 {
		t.Errorf("Remaining before %d, want 3", n)
	}
	for _, want := range []string{"a", "a", "b"} {
		resp := post(t, s, streamBody)
		chunks, _, _ := sse(t, resp.Body)
		if got := assemble(t, chunks).text; got != want {
			t.Errorf("text %q, want %q", got, want)
		}
	}
	resp := post(t, s, `{"stream":true,"messages":[{"role":"user","content":"one more"}]}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(body), "fakemodel: script exhausted after 3 replies") {
		t.Errorf("exhausted: %d %s", resp.StatusCode, body)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || !strings.Contains(string(reqs[3]), "one more") {
		t.Errorf("recorded %d requests, last %s", len(reqs), reqs[len(reqs)-1])
	}
	wantFormat := `#1 model=m1 tools=- tool_choice=- msgs=user last_user="hi"
#2 model=m1 tools=- tool_choice=- msgs=user last_user="hi"
#3 model=m1 tools=- tool_choice=- msgs=user last_user="hi"
#4 model=- tools=- tool_choice=- msgs=user last_user="one more"
! #4 answered 500: fakemodel: script exhausted after 3 replies
`
	if got := s.Format("summary"); got != wantFormat {
		t.Errorf("Format:\n%s\nwant:\n%s", got, wantFormat)
	}
	if s.Exhausted() != 1 || s.Remaining() != 0 {
		t.Errorf("Exhausted %d Remaining %d, want 1 and 0", s.Exhausted(), s.Remaining())
	}
}

func TestBadRequestsRecordedWithoutUsingReplies(t *testing.T) {
	s := start(t, `{"text": "kept"}`)
	for _, body := range []string{`not json`, `{"model":"m","messages":[]}`} {
		resp := post(t, s, body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), "fakemodel: ") {
			t.Errorf("body %q: got %d %s, want 400", body, resp.StatusCode, b)
		}
	}
	if got := len(s.Requests()); got != 2 {
		t.Errorf("recorded %d requests, want 2", got)
	}
	if s.Remaining() != 1 {
		t.Errorf("Remaining %d, want 1: bad requests must not use replies", s.Remaining())
	}
	if got := s.Format("json"); !strings.Contains(got, "#1 invalid JSON") || !strings.Contains(got, `! #2 answered 400: fakemodel: only streaming requests are served ("stream": true)`) {
		t.Errorf("Format json:\n%s", got)
	}
}

func TestModelsAndUnknownRoutes(t *testing.T) {
	s := start(t, ``)
	resp, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "fakemodel" {
		t.Errorf("models: %v %+v", err, list)
	}
	resp2, err := http.Get(s.URL() + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 404 {
		t.Errorf("unknown route status %d, want 404", resp2.StatusCode)
	}
}

func TestStartRejectsInvalidReplies(t *testing.T) {
	if _, err := Start([]Reply{{Text: "ok"}, {Status: 200}}); err == nil || !strings.Contains(err.Error(), "reply 2") {
		t.Errorf("Start error %v, want one naming reply 2", err)
	}
}

func TestWaitRequests(t *testing.T) {
	s := start(t, `{"text": "a"}
{"text": "b"}`)
	errc := make(chan error, 1)
	go func() { errc <- s.WaitRequests(context.Background(), 2) }()
	for range 2 {
		resp := post(t, s, streamBody)
		io.Copy(io.Discard, resp.Body)
	}
	if err := <-errc; err != nil {
		t.Errorf("WaitRequests: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WaitRequests(ctx, 3); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "2 requests, waiting for 3") {
		t.Errorf("WaitRequests with a cancelled context: %v", err)
	}
	s.Close()
	if err := s.WaitRequests(context.Background(), 3); err == nil || !strings.Contains(err.Error(), "server closed") {
		t.Errorf("WaitRequests after Close: %v", err)
	}
}

// TestStartFunc: each reply is chosen from the request's body and headers,
// whatever the order requests arrive in; a chosen reply that is not valid
// is answered 500.
func TestStartFunc(t *testing.T) {
	s, err := StartFunc(func(body []byte, h http.Header) Reply {
		if h.Get("X-Bad") != "" {
			return Reply{Status: 200}
		}
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		return Reply{Text: "echo " + req.Messages[0].Content + " from " + h.Get("X-Worker")}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for _, who := range []string{"b", "a"} {
		req, _ := http.NewRequest("POST", s.URL()+"/chat/completions", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi `+who+`"}]}`))
		req.Header.Set("X-Worker", who)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := sse(t, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := assemble(t, chunks).text, "echo hi "+who+" from "+who; got != want {
			t.Errorf("text %q, want %q", got, want)
		}
	}
	req, _ := http.NewRequest("POST", s.URL()+"/chat/completions", strings.NewReader(streamBody))
	req.Header.Set("X-Bad", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 || len(s.Requests()) != 3 {
		t.Errorf("bad reply answered %d, %d requests recorded; want 500 and 3", resp.StatusCode, len(s.Requests()))
	}
}
