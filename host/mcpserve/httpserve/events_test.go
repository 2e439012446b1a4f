package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/mcpserve"
)

// TestEventStoreBounds: the store keeps each session within its budget
// and all within the total, evicting oldest first and, for the total,
// from the session that keeps the most; a resume from an evicted event,
// or from before an event too big to keep, is refused whole; streams
// with no events (one per request) are bounded too; a closed session's
// bytes are freed.
func TestEventStoreBounds(t *testing.T) {
	ctx := context.Background()
	const per, total = 4 << 10, 10 << 10
	s := newEventStore(per, total)
	after := func(sess, stream string, i int) ([]string, error) {
		var out []string
		for d, err := range s.After(ctx, sess, stream, i) {
			if err != nil {
				return out, err
			}
			out = append(out, string(d))
		}
		return out, nil
	}
	check := func(what string) {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		var sum int64
		for id, ss := range s.sessions {
			if ss.n > per {
				t.Errorf("%s: session %s keeps %d bytes, over %d", what, id, ss.n, per)
			}
			sum += ss.n
		}
		if sum != s.n || s.n > total {
			t.Errorf("%s: %d bytes kept (sessions: %d), bound %d", what, s.n, sum, total)
		}
	}

	// A quiet session keeps its three events while a flood in another
	// session evicts only that session's own.
	s.Open(ctx, "quiet", "q")
	for i := range 3 {
		s.Append(ctx, "quiet", "q", []byte(fmt.Sprintf("quiet %d", i)))
	}
	s.Open(ctx, "flood", "f")
	for i := range 1000 {
		s.Append(ctx, "flood", "f", []byte(fmt.Sprintf("%0200d", i)))
		check(fmt.Sprintf("flood event %d", i))
	}
	if got, err := after("quiet", "q", -1); err != nil || strings.Join(got, ",") != "quiet 0,quiet 1,quiet 2" {
		t.Errorf("the quiet session after the flood: %q, %v", got, err)
	}
	if _, err := after("flood", "f", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resume from the flood's first event: %v, want ErrEventsPurged", err)
	}
	if got, err := after("flood", "f", 997); err != nil || len(got) != 2 || got[1] != fmt.Sprintf("%0200d", 999) {
		t.Errorf("resume from the flood's last events: %d events, %v", len(got), err)
	}

	// Three sessions at their budget exceed the total: the biggest gives
	// way, and the quiet one keeps its events.
	for _, sess := range []string{"a", "b"} {
		s.Open(ctx, sess, "x")
		for i := range 100 {
			s.Append(ctx, sess, "x", []byte(fmt.Sprintf("%0300d", i)))
			check(sess)
		}
	}
	if got, err := after("quiet", "q", -1); err != nil || len(got) != 3 {
		t.Errorf("the quiet session under the total: %q, %v", got, err)
	}

	// Requests open streams without end: their records are bounded.
	for i := range 10000 {
		id := fmt.Sprintf("stream%d", i)
		s.Open(ctx, "streams", id)
		s.Append(ctx, "streams", id, nil)
		check(id)
	}
	if _, err := after("streams", "stream0", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resume of an evicted stream: %v, want ErrEventsPurged", err)
	}
	if got, err := after("streams", "stream9999", -1); err != nil || len(got) != 1 {
		t.Errorf("resume of the newest stream: %q, %v", got, err)
	}

	// An event bigger than a session's budget is not kept: its stream
	// cannot be resumed from before it.
	s.Open(ctx, "big", "b")
	s.Append(ctx, "big", "b", []byte("small"))
	s.Append(ctx, "big", "b", make([]byte, per))
	s.Append(ctx, "big", "b", []byte("after"))
	check("big")
	if got, err := after("big", "b", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resume from before an event too big to keep: %q, %v; want ErrEventsPurged", got, err)
	}

	// An Append to a stream never opened (or whose record went) cannot
	// be placed: no resume of it.
	s.Append(ctx, "quiet", "unknown", []byte("x"))
	if _, err := after("quiet", "unknown", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resume of a stream never opened: %v, want ErrEventsPurged", err)
	}

	for _, sess := range []string{"quiet", "flood", "a", "b", "streams", "big"} {
		s.SessionClosed(ctx, sess)
	}
	if n, _ := s.kept(""); n != 0 || len(s.sessions) != 0 {
		t.Errorf("after every session closed: %d bytes, %d sessions kept", n, len(s.sessions))
	}
}

// TestEventStoreSessionEnd: through the HTTP handler and the SDK, a
// session's kept events are freed when the client ends the session
// (DELETE) and when the session expires (--session-timeout).
func TestEventStoreSessionEnd(t *testing.T) {
	srv := &mcpserve.Server{Server: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)}
	mcp.AddTool(srv.Server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		S string `json:"s"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.S}}}, nil, nil
	})
	nop := zerolog.Nop()
	limits := DefaultLimits()
	limits.SessionTimeout = 300 * time.Millisecond
	f := NewHandler(srv, "", limits, &nop)
	hs := httptest.NewServer(f)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, end := range []string{"DELETE", "expiry"} {
		t.Run(end, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"s": strings.Repeat("x", 1000)}}); err != nil {
				t.Fatal(err)
			}
			if _, kept := f.events.kept(cs.ID()); kept < 1000 {
				t.Fatalf("the session keeps %d bytes of events, want its call's result", kept)
			}
			if end == "DELETE" {
				cs.Close()
			} else {
				defer cs.Close()
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				total, kept := f.events.kept(cs.ID())
				if kept == 0 && total == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the session's %s: it keeps %d bytes (all: %d)", end, kept, total)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
