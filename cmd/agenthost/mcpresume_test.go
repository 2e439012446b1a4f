package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/mcpserve/httpserve"
	"github.com/agenthost/agenthost/internal/wasmbuild"
)

// The tests of resumable event streams of `agenthost mcp serve --http`:
// a client whose stream drops mid-call reconnects with Last-Event-ID and
// gets what it missed, within the resume buffer's bounds.

// startNapServe serves the nap plugin (testdata/nap: a tool that sleeps
// the milliseconds it is asked) with `agenthost mcp serve --http
// 127.0.0.1:0 ARGS...` and returns its URL.
func startNapServe(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := wasmbuild.Build(filepath.Join(dir, "nap.wasm"), filepath.Join("testdata", "nap")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "agents.hcl"), `provider "none" {
  base_url = "http://127.0.0.1:9/v1"
}
model "m" {
  provider = "none"
  name     = "none"
}
plugin "nap" {
  source = "nap.wasm"
  clock  = true
}
agent "a" {
  model = "m"
  tools = ["nap"]
}
`)
	return startMCPServe(t, dir, args...)
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, name, retry, data string
}

// readEvent reads the next event from r (comments skipped); io.EOF at
// the end of the stream.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var e sseEvent
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && seen {
				return e, io.ErrUnexpectedEOF
			}
			return e, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return e, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		seen = true
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "id":
			e.id = v
		case "event":
			e.name = v
		case "retry":
			e.retry = v
		case "data":
			if e.data != "" {
				e.data += "\n"
			}
			e.data += v
		}
	}
}

// rawSession is an MCP session spoken in raw HTTP, protocol 2025-11-25.
type rawSession struct {
	url, id string
	hc      *http.Client
}

const resumeProtocol = "2025-11-25"

// newRawSession initializes a session at url.
func newRawSession(t *testing.T, url string) *rawSession {
	t.Helper()
	s := &rawSession{url: url, hc: &http.Client{}}
	resp := s.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+resumeProtocol+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	s.id = resp.Header.Get("Mcp-Session-Id")
	if _, err := s.result(resp.Body, 0); err != nil || s.id == "" {
		t.Fatalf("initialize: %v (session %q)", err, s.id)
	}
	resp.Body.Close()
	resp = s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", resp.Status)
	}
	return s
}

func (s *rawSession) header(r *http.Request) {
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", resumeProtocol)
	if s.id != "" {
		r.Header.Set("Mcp-Session-Id", s.id)
	}
}

// post sends body and returns the response, status 2xx.
func (s *rawSession) post(t *testing.T, body string) *http.Response {
	t.Helper()
	r, err := http.NewRequest("POST", s.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	s.header(r)
	r.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %s %s", body, resp.Status, b)
	}
	return resp
}

// resume sends a GET with Last-Event-ID lastID. Until the server has seen
// that the dropped stream's connection is gone, it answers 409 (the
// stream is still claimed): that is retried, for up to 10 s.
func (s *rawSession) resume(t *testing.T, lastID string) *http.Response {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := http.NewRequest("GET", s.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.header(r)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("Last-Event-ID", lastID)
		resp, err := s.hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			return resp
		}
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
}

// result reads events from body until the answer to request id, and
// returns its data.
func (s *rawSession) result(body io.Reader, id int) (string, error) {
	r := bufio.NewReader(body)
	for {
		e, err := readEvent(r)
		if err != nil {
			return "", fmt.Errorf("no answer to request %d: %w", id, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(e.data), &m) == nil && m.ID != nil && *m.ID == id {
			if m.Result == nil {
				return "", fmt.Errorf("request %d: error %s", id, m.Error)
			}
			return e.data, nil
		}
	}
}

// callNap posts a tools/call of nap for ms milliseconds as request id and
// returns the response, its first event read: the priming event, whose id
// the stream is resumed from.
func (s *rawSession) callNap(t *testing.T, id, ms int) (*http.Response, *bufio.Reader, sseEvent) {
	t.Helper()
	resp := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nap","arguments":{"ms":%d,"i":%d}}}`, id, ms, id))
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered %s, want an event stream", ct)
	}
	br := bufio.NewReader(resp.Body)
	first, err := readEvent(br)
	if err != nil {
		t.Fatalf("the call's stream: %v", err)
	}
	if first.id == "" || first.data != "" {
		t.Fatalf("the call's first event is %+v, want a priming event: an id, no data", first)
	}
	return resp, br, first
}

// TestMCPHTTPResumeDroppedCall: a client calls a tool that takes 1.5 s and
// drops the call's event stream as soon as it has the priming event (an
// id, empty data, the retry field); a GET with that id as Last-Event-ID
// gets the call's result. A second GET from the same id, once the call is
// over, gets the result again, from the event store, and then the end of
// the stream.
func TestMCPHTTPResumeDroppedCall(t *testing.T) {
	url := startNapServe(t)
	s := newRawSession(t, url)
	resp, _, prime := s.callNap(t, 7, 1500)
	if prime.retry != httpserve.SSERetry {
		t.Errorf("the priming event's retry field is %q, want %q", prime.retry, httpserve.SSERetry)
	}
	resp.Body.Close() // the stream drops mid-call

	for i, what := range []string{"while the call runs", "after the call"} {
		resp := s.resume(t, prime.id)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("resume %d (%s): %s %s", i+1, what, resp.Status, b)
		}
		br := bufio.NewReader(resp.Body)
		data, err := s.result(br, 7)
		if err != nil {
			t.Fatalf("resume %d (%s): %v", i+1, what, err)
		}
		if !strings.Contains(data, "napped 1500 ms (call 7)") {
			t.Errorf("resume %d (%s): %s, want the nap's result", i+1, what, data)
		}
		// The call's stream is complete: the server ends it.
		if _, err := readEvent(br); err != io.EOF {
			t.Errorf("resume %d (%s): after the result: %v, want the end of the stream", i+1, what, err)
		}
		resp.Body.Close()
	}
}

// TestMCPHTTPResumeBufferBound: with --resume-buffer 1KiB, a session's
// older calls' events are evicted as new calls come: a resume from the
// first call's priming event is refused (400, not a partial replay, not
// 404: the session lives), while the last call's stream is resumed whole
// and the session goes on answering. A flag below the minimum is refused
// with a message naming it.
func TestMCPHTTPResumeBufferBound(t *testing.T) {
	url := startNapServe(t, "--resume-buffer", "1KiB")
	s := newRawSession(t, url)
	var primes []sseEvent
	for id := 1; id <= 4; id++ {
		resp, br, prime := s.callNap(t, id, 0)
		if _, err := s.result(br, id); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		primes = append(primes, prime)
	}

	resp := s.resume(t, primes[0].id)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "failed to replay events") {
		t.Errorf("resume of the first call, evicted: %s %s, want 400 failed to replay events", resp.Status, b)
	}

	resp = s.resume(t, primes[3].id)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("resume of the last call: %s %s", resp.Status, b)
	}
	data, err := s.result(resp.Body, 4)
	resp.Body.Close()
	if err != nil || !strings.Contains(data, "napped 0 ms (call 4)") {
		t.Errorf("resume of the last call: %s, %v; want its result", data, err)
	}

	resp = s.post(t, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if _, err := s.result(resp.Body, 9); err != nil {
		t.Errorf("the session after a refused resume: %v", err)
	}
	resp.Body.Close()

	out, err := runAgenthost(t, "mcp", "serve", "--http", "127.0.0.1:0", "--resume-buffer", "100")
	if err == nil || !strings.Contains(out, "--resume-buffer 100B: must be 0 (no resumable streams) or at least 1KiB") {
		t.Errorf("--resume-buffer 100: %v\n%s", err, out)
	}
}

// runAgenthost runs agenthost with args in an empty directory and returns
// its output.
func runAgenthost(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "agenthost", args...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	return string(out), err
}
