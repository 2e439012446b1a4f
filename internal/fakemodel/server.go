package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxBody caps the request body the server reads (256 MiB): room for a
// conversation carrying a tool result of 70 MiB, as the scripts that test
// sessions with such lines send.
const maxBody = 256 << 20

// readBody reads a request's body, at most maxBody+1 bytes, into one
// buffer of its declared length when it has one.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBody {
		b := make([]byte, n, n+1)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return b, err
		}
		return b, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, maxBody+1))
}

// created is the fixed "created" timestamp of every chunk, for stable output.
const created = 1700000000

// Server is a running fake model. Its methods are safe for concurrent use.
type Server struct {
	srv  *http.Server
	url  string
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	hmu    sync.Mutex // guards closed and wg.Add from handlers
	closed bool

	released    chan struct{} // closed by Release: held replies go on
	releaseOnce sync.Once

	mu        sync.Mutex
	replies   []Reply
	next      int // index of the reply to serve next
	used      int // times replies[next] was served already
	served    int // replies served in total
	exhausted int // requests answered "script exhausted"
	requests  [][]byte
	uris      []string      // per request: method and request URI
	notes     []string      // per request: why it got no scripted reply, or ""
	arrived   chan struct{} // closed and replaced when a request is recorded

	cat catalog // GET /v1/models and the API key (catalog.go)

	// choose, when set (StartFunc), picks each reply instead of the script.
	choose Chooser
}

// Chooser picks the reply to one chat-completions request from its body
// and headers. It is called concurrently.
type Chooser func(body []byte, header http.Header) Reply

// StartFunc serves replies chosen per request by choose, instead of a
// script in arrival order: for concurrent runs, whose requests interleave,
// the reply can depend on the conversation so far. The caller must Close
// the server. A reply that is not valid is answered 500.
func StartFunc(choose Chooser) (*Server, error) {
	s, err := Start(nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.choose = choose
	s.mu.Unlock()
	return s, nil
}

// Start serves replies on 127.0.0.1 at a free port. The caller must Close
// the server.
func Start(replies []Reply) (*Server, error) {
	for i := range replies {
		if err := replies[i].validate(); err != nil {
			return nil, fmt.Errorf("fakemodel: reply %d: %w", i+1, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		url:      "http://" + ln.Addr().String() + "/v1",
		done:     make(chan struct{}),
		released: make(chan struct{}),
		arrived:  make(chan struct{}),
		replies:  append([]Reply(nil), replies...),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("fakemodel: no route for %s %s", r.Method, r.URL.Path))
	})
	s.srv = &http.Server{Handler: s.track(mux)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// URL is the base URL of the API, ending in /v1 (a provider's base_url).
func (s *Server) URL() string { return s.url }

// Requests returns the raw JSON bodies of every chat-completions request
// received so far, in arrival order, including those answered with errors.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.requests))
	for i, b := range s.requests {
		out[i] = append([]byte(nil), b...)
	}
	return out
}

// URLs returns "METHOD REQUEST-URI" of every chat-completions request
// received so far ("POST /v1/chat/completions?api-version=1"), in arrival
// order: what the client made of its base URL.
func (s *Server) URLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uris...)
}

// Addr is the server's host:port ("127.0.0.1:41234"), for tests that
// build their own base URL (credentials, a query).
func (s *Server) Addr() string {
	return strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/v1")
}

// Format renders the recorded requests like FormatRequests, and marks each
// request that got no scripted reply (script exhausted, rejected) with a
// "!" line saying how it was answered.
func (s *Server) Format(mode string) string {
	s.mu.Lock()
	reqs, notes := s.requests[:len(s.requests):len(s.requests)], append([]string(nil), s.notes...)
	s.mu.Unlock()
	return formatRequests(reqs, notes, mode)
}

func (s *Server) note(i int, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes[i] = text
}

// WaitRequests blocks until at least n requests have been recorded, ctx is
// done, or the server is closed.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, arrived := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("fakemodel: %d requests, waiting for %d: %w", got, n, ctx.Err())
		case <-s.done:
			return fmt.Errorf("fakemodel: server closed after %d requests, waiting for %d", got, n)
		}
	}
}

// Release lets every held reply (hold: true) go on, now and later. It is
// safe to call more than once.
func (s *Server) Release() {
	s.releaseOnce.Do(func() { close(s.released) })
}

// Remaining is the number of scripted responses not served yet, repeats
// counted.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := s.next; i < len(s.replies); i++ {
		n += s.replies[i].times()
	}
	return n - s.used
}

// Exhausted is the number of requests that arrived after the script was
// used up (each answered with HTTP 500).
func (s *Server) Exhausted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exhausted
}

// Close stops the server, releases hanging replies and waits for every
// handler to return. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.hmu.Lock()
		s.closed = true
		s.hmu.Unlock()
		close(s.done)
		_ = s.srv.Close()
	})
	s.wg.Wait()
}

// track counts running handlers so Close can wait for them.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hmu.Lock()
		if s.closed {
			s.hmu.Unlock()
			writeError(w, http.StatusServiceUnavailable, "server_error", "fakemodel: server closed")
			return
		}
		s.wg.Add(1)
		s.hmu.Unlock()
		defer s.wg.Done()
		h.ServeHTTP(w, r)
	})
}

// take returns the next reply and its 1-based serial number; ok is false
// when the script is used up, and n is then the number of replies served.
func (s *Server) take() (r Reply, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.replies) {
		s.exhausted++
		return Reply{}, s.served, false
	}
	r = s.replies[s.next]
	s.used++
	s.served++
	if s.used >= r.times() {
		s.next++
		s.used = 0
	}
	return r, s.served, true
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	s.mu.Lock()
	s.requests = append(s.requests, body)
	s.uris = append(s.uris, r.Method+" "+r.RequestURI)
	s.notes = append(s.notes, "")
	idx := len(s.requests) - 1
	close(s.arrived)
	s.arrived = make(chan struct{})
	s.mu.Unlock()
	reject := func(status int, typ, msg string) {
		s.note(idx, fmt.Sprintf("answered %d: %s", status, msg))
		writeError(w, status, typ, msg)
	}
	if !s.authorized(w, r) {
		s.note(idx, "answered 401: no valid API key")
		return
	}
	if err != nil {
		reject(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("fakemodel: read request body: %v", err))
		return
	}
	if len(body) > maxBody {
		reject(http.StatusRequestEntityTooLarge, "invalid_request_error", fmt.Sprintf("fakemodel: request body larger than %d bytes", maxBody))
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	var fast bool
	if req.Model, req.Stream, fast = readRequest(body); !fast {
		req.Model, req.Stream = "", false
		if err := json.Unmarshal(body, &req); err != nil {
			reject(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("fakemodel: request body is not a JSON object: %v", err))
			return
		}
	}
	if !req.Stream {
		reject(http.StatusBadRequest, "invalid_request_error", `fakemodel: only streaming requests are served ("stream": true)`)
		return
	}
	s.mu.Lock()
	choose := s.choose
	s.mu.Unlock()
	if choose != nil {
		reply := choose(body, r.Header)
		if err := reply.validate(); err != nil {
			reject(http.StatusInternalServerError, "fakemodel_bad_reply", fmt.Sprintf("fakemodel: chosen reply: %v", err))
			return
		}
		s.mu.Lock()
		s.served++
		n := s.served
		s.mu.Unlock()
		s.serve(w, r, reply, n, req.Model)
		return
	}
	reply, n, ok := s.take()
	if !ok {
		reject(http.StatusInternalServerError, "fakemodel_script_exhausted", fmt.Sprintf("fakemodel: script exhausted after %d replies", n))
		return
	}
	s.serve(w, r, reply, n, req.Model)
}

// serve answers with reply, the n-th served.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, reply Reply, n int, model string) {
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	switch {
	case reply.Status != 0:
		writeStatus(w, reply)
	case reply.Raw != "":
		setDefault(w.Header(), "Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, reply.Raw)
	default:
		s.stream(w, r, reply, n, model)
	}
}

func setDefault(h http.Header, k, v string) {
	if h.Get(k) == "" {
		h.Set(k, v)
	}
}

// writeStatus answers a scripted HTTP error.
func writeStatus(w http.ResponseWriter, reply Reply) {
	body := reply.Body
	if len(body) == 0 {
		writeError(w, reply.Status, errorType(reply.Status), fmt.Sprintf("fakemodel: HTTP %d", reply.Status))
		return
	}
	var text string
	if json.Unmarshal(body, &text) == nil {
		setDefault(w.Header(), "Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(reply.Status)
		_, _ = io.WriteString(w, text)
		return
	}
	setDefault(w.Header(), "Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_, _ = w.Write(body)
}

// errorType is the OpenAI error type for a status.
func errorType(status int) string {
	switch {
	case status == 400:
		return "invalid_request_error"
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "error"
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ}})
	setDefault(w.Header(), "Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Wire shapes of a stream chunk.
type chunk struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []choice   `json:"choices"`
	Usage   *wireUsage `json:"usage,omitempty"`
}

// wireUsage is a Usage as OpenAI sends it.
type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Details          *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string      `json:"role,omitempty"`
	Content          *string     `json:"content,omitempty"`
	ReasoningContent string      `json:"reasoning_content,omitempty"`
	ToolCalls        []deltaCall `json:"tool_calls,omitempty"`
}

type deltaCall struct {
	Index    int       `json:"index"`
	ID       string    `json:"id,omitempty"`
	Type     string    `json:"type,omitempty"`
	Function deltaFunc `json:"function"`
}

type deltaFunc struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// errClientGone stops a stream whose client went away.
var errClientGone = errors.New("fakemodel: client gone")

// stream answers with reply as server-sent events. n is the reply's serial
// number, used for chunk and call ids.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply, n int, model string) {
	rc := http.NewResponseController(w)
	h := w.Header()
	setDefault(h, "Content-Type", "text/event-stream")
	setDefault(h, "Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	id := fmt.Sprintf("chatcmpl-fake-%d", n)
	pause := reply.chunkDelay()
	send := func(choices []choice, usage *wireUsage) error {
		if pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return errClientGone
			case <-s.done:
				t.Stop()
				panic(http.ErrAbortHandler)
			}
		}
		b, err := json.Marshal(chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: choices, Usage: usage})
		if err != nil {
			return fmt.Errorf("fakemodel: encode chunk: %w", err)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return errClientGone
		}
		if err := rc.Flush(); err != nil {
			return errClientGone
		}
		return nil
	}
	one := func(d delta) error { return send([]choice{{Delta: d}}, nil) }

	empty := ""
	if one(delta{Role: "assistant", Content: &empty}) != nil {
		return
	}
	if reply.Hold {
		select {
		case <-s.released:
		case <-r.Context().Done():
			return
		case <-s.done:
			panic(http.ErrAbortHandler)
		}
	}
	var deltas []delta
	if reply.Reasoning != "" {
		deltas = append(deltas, delta{ReasoningContent: reply.Reasoning})
	}
	for _, p := range splitWords(reply.Text) {
		deltas = append(deltas, delta{Content: &p})
	}
	if reply.Hang {
		if len(deltas) > 0 && one(deltas[0]) != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			// The server is going away: drop the connection rather
			// than end the stream cleanly.
			panic(http.ErrAbortHandler)
		}
	}
	for i, c := range reply.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%d_%d", n, i+1)
		}
		deltas = append(deltas, delta{ToolCalls: []deltaCall{{Index: i, ID: callID, Type: "function", Function: deltaFunc{Name: c.Name}}}})
		args, _ := c.argumentText() // validated by Start
		for _, frag := range splitThirds(args) {
			deltas = append(deltas, delta{ToolCalls: []deltaCall{{Index: i, Function: deltaFunc{Arguments: frag}}}})
		}
	}
	for _, d := range deltas {
		if one(d) != nil {
			return
		}
	}
	if reply.Cut {
		// Drop the connection without the terminating chunk of the
		// chunked encoding: the client sees an unexpected EOF.
		panic(http.ErrAbortHandler)
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if send([]choice{{Delta: delta{}, FinishReason: &finish}}, nil) != nil {
		return
	}
	if u := reply.Usage; u != nil {
		usage := wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if usage.TotalTokens == 0 {
			usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
		}
		if u.CachedTokens > 0 {
			usage.Details = &struct {
				CachedTokens int `json:"cached_tokens"`
			}{u.CachedTokens}
		}
		if send([]choice{}, &usage) != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// splitWords splits text after the whitespace that follows every second
// word; the pieces join to text.
func splitWords(text string) []string {
	var pieces []string
	start, words, inWord := 0, 0, false
	for i, r := range text {
		if unicode.IsSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			if words == 2 {
				pieces = append(pieces, text[start:i])
				start, words = i, 0
			}
			words++
			inWord = true
		}
	}
	if start < len(text) {
		pieces = append(pieces, text[start:])
	}
	return pieces
}

// splitThirds splits s into up to three non-empty pieces on rune boundaries.
func splitThirds(s string) []string {
	var pieces []string
	size := (len(s) + 2) / 3
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	return pieces
}
