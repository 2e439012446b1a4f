package provider

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// countingConn counts the writes on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestOneWrite: with the default client, a request of a 30 KiB
// history leaves in one write, headers and body together (the body is one
// in-memory buffer and the write buffer holds it), and the next request of
// the history (a step later) does too, with its body joined in the same
// buffer.
func TestRequestOneWrite(t *testing.T) {
	s := newServer(t, sse(doneStream))
	var writes atomic.Int64
	client := defaultHTTPClient()
	tr := client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, &writes}, nil
	}
	p := s.provider(Options{HTTPClient: client})
	msgs := []loop.Message{{Role: loop.RoleUser, Content: strings.Repeat("many words ", 3000)}}
	var bufs []*byte
	for step := range 3 {
		writes.Store(0)
		if _, err := p.Stream(context.Background(), loop.Request{Messages: msgs, Tools: []loop.ToolSpec{readFile}}, nil); err != nil {
			t.Fatal(err)
		}
		if n := writes.Load(); n != 1 {
			t.Errorf("step %d: request went out in %d writes, want 1", step, n)
		}
		got := s.lastBody(t)
		if m := got["messages"].([]any); len(m) != len(msgs) {
			t.Fatalf("step %d: server got %d messages, want %d", step, len(m), len(msgs))
		}
		e := p.prefixes.take(msgs)
		if e == nil || e.body == nil {
			t.Fatalf("step %d: no body buffer kept for the history", step)
		}
		bufs = append(bufs, &e.body[:1][0])
		p.prefixes.put(e)
		msgs = append(msgs,
			loop.Message{Role: loop.RoleAssistant, Content: "ok", ToolCalls: []loop.ToolCall{{ID: "c" + string(rune('a'+step)), Name: "read_file", Arguments: `{}`}}},
			loop.Message{Role: loop.RoleTool, ToolCallID: "c" + string(rune('a'+step)), Content: "text"})
	}
	if bufs[1] != bufs[2] {
		t.Error("the body buffer was not reused from one step to the next")
	}
}

// writerTransport answers every request with doneStream and reports the
// body written (httptrace's WroteRequest, as net/http's transport does)
// only after as many readers as wrote says: a transport still writing
// the body when the answer is complete (a server that answers before
// reading the request) is one that has not reported it yet.
type writerTransport struct {
	getBody bool // ask GetBody for a second reader, as a retry would
	wrote   int  // WroteRequest calls to make
}

func (w writerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	if w.getBody {
		b, _ := r.GetBody()
		io.Copy(io.Discard, b)
	}
	if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.WroteRequest != nil {
		for range w.wrote {
			tr.WroteRequest(httptrace.WroteRequestInfo{})
		}
	}
	return memTransport{body: []byte(doneStream)}.RoundTrip(r)
}

// TestBodyReuse: the body's buffer goes back to the history's cache entry
// for the next request only when every reader net/http was given has been
// written; otherwise net/http may still read it and the entry goes back
// without it.
func TestBodyReuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   writerTransport
		kept bool
	}{
		{"written", writerTransport{wrote: 1}, true},
		{"still writing", writerTransport{wrote: 0}, false},
		{"retried, written", writerTransport{getBody: true, wrote: 2}, true},
		{"retried, still writing", writerTransport{getBody: true, wrote: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{BaseURL: "http://mem.local/v1", ModelID: "m", HTTPClient: &http.Client{Transport: tc.tr}})
			msgs := []loop.Message{{Role: loop.RoleUser, Content: "hello"}}
			resp, err := p.Stream(context.Background(), loop.Request{Messages: msgs}, nil)
			if err != nil || resp.Message.Content != "ok" {
				t.Fatalf("Stream = %+v, %v", resp, err)
			}
			e := p.prefixes.take(msgs)
			if e == nil {
				t.Fatal("the history's encoding was not kept")
			}
			if kept := e.body != nil; kept != tc.kept {
				t.Errorf("body buffer kept = %v, want %v", kept, tc.kept)
			}
		})
	}
}
