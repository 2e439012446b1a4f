package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/agenthost/agenthost/internal/redact"
)

// maxErrorBody is how much of a failed response's body is kept.
const maxErrorBody = 1 << 20

// Limits on what a server may send; variables so that tests can lower them.
var (
	// maxLine is the longest SSE line accepted (a whole tool call may come
	// in one line, so this is generous).
	maxLine = 32 << 20
	// maxBody bounds a whole streamed response. A 128k-token answer at
	// ~250 bytes of SSE per token is about 32 MiB.
	maxBody int64 = 128 << 20
)

var (
	// errLineTooLong is returned by the SSE normaliser for a line above maxLine.
	errLineTooLong = errors.New("server-sent event line too long")
	// errBodyTooLarge is returned once a stream exceeds maxBody.
	errBodyTooLarge = errors.New("response too large")
	errBodyClosed   = errors.New("read on a closed response body")
)

// exchange is the go-openai HTTPDoer for one Stream call. It adds the extra
// headers, patches what go-openai's request types cannot express, and
// remembers what go-openai hides: whether a request went out, and the status,
// headers and body of a failed response. A successful body is replaced by an
// sseBody that normalises the event stream before go-openai reads it.
type exchange struct {
	client  *http.Client
	headers map[string]string
	query   string // the base URL's raw query, added to the request's
	patch   bodyPatch
	onByte  func() // called whenever bytes arrive from the server

	sent       bool  // the request reached client.Do
	preSendErr error // the request could not be prepared

	status int         // status of a failed response; 0 otherwise
	header http.Header // headers of a failed response
	body   []byte      // body of a failed response, at most maxErrorBody bytes

	sse *sseBody // the body of a successful response

	trace   httptrace.ClientTrace // WroteRequest: wrote
	writing atomic.Int32          // body readers handed out and not yet written
}

func (x *exchange) Do(req *http.Request) (*http.Response, error) {
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	if x.query != "" {
		if req.URL.RawQuery == "" {
			req.URL.RawQuery = x.query
		} else {
			req.URL.RawQuery += "&" + x.query
		}
	}
	if !x.patch.empty() && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		var parts [][]byte
		if err == nil {
			parts, err = x.patch.apply(b)
		}
		if err != nil {
			x.preSendErr = err
			return nil, err
		}
		body := x.joinBody(parts)
		// A *bytes.Reader (behind io.NopCloser) is a body net/http knows
		// to be in memory: it buffers the headers with it instead of
		// flushing them in a write of their own, and with the transport's
		// write buffer (defaultHTTPClient) a typical request leaves in one
		// write.
		x.writing.Store(1)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) {
			x.writing.Add(1)
			return io.NopCloser(bytes.NewReader(body)), nil
		}
		req.ContentLength = int64(len(body))
	}
	x.sent = true
	resp, err := x.client.Do(req)
	if err != nil {
		// net/http quotes the whole URL, query included ("Post URL: ...").
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redact.URL(ue.URL)
		}
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		// go-openai reads the body of a failed response but never closes it
		// and drops the headers: keep both here and hand it a copy.
		x.status = resp.StatusCode
		x.header = resp.Header
		// A body cut short still leaves the status to classify by.
		x.body, _ = io.ReadAll(io.LimitReader(&byteReader{r: resp.Body, onByte: x.onByte}, maxErrorBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(x.body))
		// go-openai takes a 1xx/3xx for a stream; Stream checks x.status
		// before reading it.
		return resp, nil
	}
	x.sse = newSSEBody(resp.Body, x.onByte)
	resp.Body = x.sse
	return resp, nil
}

// joinBody puts the parts of the body one after the other, in the body
// buffer of the history's prefix-cache entry when it has one (reused from
// request to request of the history: see wrote), or a new buffer.
func (x *exchange) joinBody(parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var body []byte
	if e := x.patch.prefix; e != nil && cap(e.body) >= n {
		body = e.body[:0]
	} else {
		body = make([]byte, 0, n+n/4) // the next request is a little longer
	}
	for _, p := range parts {
		body = append(body, p...)
	}
	if e := x.patch.prefix; e != nil {
		e.body = body
	}
	return body
}

// wrote is the httptrace hook called when net/http has written the
// request, body included, or given up writing it: after it the body's
// bytes are no longer read (a retry or redirect asks GetBody for another
// reader first, counted in writing).
func (x *exchange) wrote(httptrace.WroteRequestInfo) { x.writing.Add(-1) }

// bodyDone reports whether net/http is done with every reader of the body
// it was given. Until it is, the body's buffer must not be reused: net/http
// may still be writing it after the response arrived (a server that
// answers before reading the request).
func (x *exchange) bodyDone() bool { return x.writing.Load() == 0 }

// byteReader calls onByte whenever bytes arrive and counts them. With a
// limit, reading more than limit bytes fails with errBodyTooLarge.
type byteReader struct {
	r      io.Reader
	onByte func()
	n      int64
	limit  int64 // 0: none
}

func (b *byteReader) Read(p []byte) (int, error) {
	if b.limit > 0 && b.n >= b.limit {
		return 0, errBodyTooLarge
	}
	n, err := b.r.Read(p)
	if n > 0 {
		b.n += int64(n)
		if b.onByte != nil {
			b.onByte()
		}
	}
	return n, err
}

// sseBody normalises a chat-completion event stream into the one form
// go-openai's reader handles well: a sequence of "data: <payload>\n" lines.
//
//   - comment lines (": keep-alive"), event:, id: and retry: lines and blank
//     lines are dropped (go-openai counts them as "empty messages" and gives
//     up after 300, and mistakes an error after them for garbage);
//   - "event: error" followed by "data: {...}", and llama.cpp's legacy
//     "error: {...}" line, become "data: { "error": {...}}";
//   - a payload starting with {"error": gets a space after the brace so that
//     go-openai's one-pattern error detection leaves it to our own parser,
//     which understands every error shape;
//   - a final line without a newline gets one (go-openai would drop it);
//   - a body that starts with JSON instead of SSE (a server ignoring
//     "stream": true, or NDJSON) is re-emitted one JSON value per data line.
//
// It remembers whether "data: [DONE]" arrived.
type sseBody struct {
	raw     *byteReader
	closer  io.Closer
	src     *bufio.Reader
	started bool
	jsonDec *json.Decoder // set when the body is JSON rather than SSE

	out     []byte // normalised bytes not yet read
	buf     []byte // backing array reused for out
	line    []byte // a line longer than the bufio buffer, assembled
	err     error  // sticky error from the source
	done    bool   // "data: [DONE]" seen
	evError bool   // the current event is "event: error"
}

// sseReaders holds the 16 KiB line readers of closed bodies, so that a
// response reuses one instead of allocating its own: a step makes a request
// or more, and the reader would be much of what it allocates.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

func newSSEBody(body io.ReadCloser, onByte func()) *sseBody {
	raw := &byteReader{r: body, onByte: onByte, limit: maxBody}
	src := sseReaders.Get().(*bufio.Reader)
	src.Reset(raw)
	return &sseBody{raw: raw, closer: body, src: src}
}

// Bytes reports how many bytes arrived from the server.
func (s *sseBody) Bytes() int64 { return s.raw.n }

// Done reports whether the server sent "data: [DONE]".
func (s *sseBody) Done() bool { return s.done }

// Close closes the body and gives its line reader back for the next
// response; reading after Close fails. (Close and Read are called from one
// goroutine: the stream's reader.)
func (s *sseBody) Close() error {
	if s.src != nil && s.jsonDec == nil { // a JSON decoder keeps src
		s.src.Reset(nil)
		sseReaders.Put(s.src)
	}
	s.src, s.out = nil, nil
	return s.closer.Close()
}

func (s *sseBody) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.src == nil {
			return 0, errBodyClosed
		}
		s.buf = s.buf[:0]
		s.fill()
		s.out = s.buf
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill appends at least one normalised line to s.buf or sets s.err.
func (s *sseBody) fill() {
	if !s.started {
		s.started = true
		if s.startsWithJSON() {
			s.jsonDec = json.NewDecoder(s.src)
		}
	}
	if s.jsonDec != nil {
		s.fillJSON()
		return
	}
	for len(s.buf) == 0 && s.err == nil {
		line, err := s.readLine()
		if len(line) > 0 || err == nil {
			s.process(line)
		}
		if err != nil {
			s.err = err
		}
	}
}

// startsWithJSON skips leading white space and reports whether the body
// starts with a JSON object or array.
func (s *sseBody) startsWithJSON() bool {
	for {
		b, err := s.src.Peek(1)
		if err != nil {
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			s.src.ReadByte()
		case '{', '[':
			return true
		default:
			return false
		}
	}
}

func (s *sseBody) fillJSON() {
	var v json.RawMessage
	if err := s.jsonDec.Decode(&v); err != nil {
		if !errors.Is(err, io.EOF) {
			err = fmt.Errorf("response body is neither an event stream nor valid JSON: %w", err)
		}
		s.err = err
		return
	}
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		s.err = err
		return
	}
	s.emitData(c.Bytes())
}

// readLine returns the next line without its line ending. At the end of the
// stream it returns the last partial line (if any) together with the error.
func (s *sseBody) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.src.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(s.line)+len(frag) > maxLine {
				return nil, errLineTooLong
			}
			s.line = append(s.line, frag...)
			continue
		}
		line := frag
		if len(s.line) > 0 {
			s.line = append(s.line, frag...)
			line = s.line
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

var (
	prefixData  = []byte("data:")
	prefixEvent = []byte("event:")
	prefixError = []byte("error:")
	doneMarker  = []byte("[DONE]")
	errorObject = []byte(`{"error"`)
)

func (s *sseBody) process(line []byte) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		s.evError = false // an event ends at a blank line
	case line[0] == ':':
		// comment / keep-alive
	case bytes.HasPrefix(line, prefixData):
		payload := bytes.TrimSpace(line[len(prefixData):])
		switch {
		case bytes.Equal(payload, doneMarker):
			s.done = true
			s.buf = append(s.buf, "data: [DONE]\n"...)
		case s.evError:
			s.emitError(payload)
		default:
			s.emitData(payload)
		}
	case bytes.HasPrefix(line, prefixEvent):
		s.evError = string(bytes.TrimSpace(line[len(prefixEvent):])) == "error"
	case bytes.HasPrefix(line, prefixError):
		s.emitError(bytes.TrimSpace(line[len(prefixError):]))
	case line[0] == '{':
		s.emitData(line) // a bare JSON chunk (NDJSON after an SSE start)
	default:
		// id:, retry:, and anything else a server invents
	}
}

func (s *sseBody) emitData(payload []byte) {
	if len(payload) == 0 {
		return
	}
	s.buf = append(s.buf, "data: "...)
	if bytes.HasPrefix(payload, errorObject) {
		s.buf = append(s.buf, "{ "...)
		payload = payload[1:]
	}
	s.buf = append(s.buf, payload...)
	s.buf = append(s.buf, '\n')
}

// emitError wraps an error payload as a chunk with a top-level "error".
func (s *sseBody) emitError(payload []byte) {
	s.buf = append(s.buf, `data: { "error": `...)
	if json.Valid(payload) {
		s.buf = append(s.buf, payload...)
	} else {
		q, _ := json.Marshal(string(payload)) // a string never fails
		s.buf = append(s.buf, q...)
	}
	s.buf = append(s.buf, "}\n"...)
}
