package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/loop"
)

// server is a real HTTP server on 127.0.0.1 that records every request.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	requests int
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.requests++
		s.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusTeapot)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// lastBody decodes the last request body.
func (s *server) lastBody(t *testing.T) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		t.Fatal("server received no request")
	}
	var m map[string]any
	if err := json.Unmarshal(s.bodies[len(s.bodies)-1], &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, s.bodies[len(s.bodies)-1])
	}
	return m
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *server) provider(o Options) *Provider {
	o.BaseURL = s.URL + "/v1"
	if o.ModelID == "" {
		o.ModelID = "test-model"
	}
	return New(o)
}

// sse serves body byte for byte as an event stream, flushing after every
// event (a blank line) so that events arrive in separate reads, as from a
// real server.
func sse(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := stream
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for body != "" {
			i := strings.Index(body, "\n\n")
			if i < 0 {
				i = len(body)
			} else {
				i += 2
			}
			io.WriteString(w, body[:i])
			fl.Flush()
			body = body[i:]
		}
	}
}

// status answers with the given status, headers and body.
func status(code int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if strings.HasPrefix(strings.TrimSpace(body), "{") || strings.HasPrefix(strings.TrimSpace(body), "[") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// hijack writes raw bytes on the connection and closes it: for responses
// no well-behaved server library would produce.
func hijack(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString(raw)
		buf.Flush()
		conn.Close()
	}
}

// chunked encodes body as one HTTP/1.1 chunk (without the final chunk).
func chunked(body string) string {
	return fmt.Sprintf("%x\r\n%s\r\n", len(body), body)
}

func ask(prompt string) loop.Request {
	return loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: prompt}}}
}

var readFile = loop.ToolSpec{
	Name:        "read_file",
	Description: "Read a file",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
}

func providerError(t *testing.T, err error) *loop.ProviderError {
	t.Helper()
	var pe *loop.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *loop.ProviderError", err, err)
	}
	return pe
}

func jsonString(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func diff(t *testing.T, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("got:\n%s\nwant:\n%s\n(-want +got):\n%s", jsonString(got), jsonString(want), d)
	}
}

// refusedURL is a URL on 127.0.0.1 where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// memTransport answers every request with the same event stream from
// memory: for benchmarks that should measure parsing, not sockets.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200,
		Status:     "200 OK",
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(m.body)),
		Request: r,
	}, nil
}
