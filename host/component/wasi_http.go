package component

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agenthost/agenthost/internal/hostmem"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/sandbox"
)

// wasi:http error-code cases used here (stable across WASI 0.2.x).
const (
	hecDNSError           = 1
	hecDestNotFound       = 2
	hecConnRefused        = 6
	hecConnTimeout        = 8
	hecTLSProtocol        = 12
	hecRequestDenied      = 15
	hecRequestBodySize    = 17
	hecRequestURIInvalid  = 19
	hecResponseBodySize   = 28
	hecResponseIncomplete = 25
	hecHTTPProtocol       = 35
	hecInternal           = 38

	headerInvalid   = 0
	headerForbidden = 1
	headerImmutable = 2
)

// Bounds on what one call may do with HTTP.
const (
	maxHTTPRequests = 256     // requests per call
	maxRefusedKept  = 4       // refused requests a call reports by URL
	maxFieldBytes   = 1 << 20 // bytes of one fields object's names and values
)

var defaultTransport = sync.OnceValue(func() http.RoundTripper {
	// No proxy from the environment: the allow list names the hosts
	// reached.
	return &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4}
})

// fields are HTTP headers or trailers.
type fields struct {
	names     []string
	values    [][]byte
	size      int
	immutable bool
	// held is what the fields charge to budget, the call's (hostmem):
	// each entry's bytes and entryCost. Fields that share another's
	// entries (outgoing-request.headers) hold nothing.
	budget *hostmem.Budget
	held   uint64
}

// entryCost is what an entry of fields costs the host beside its bytes
// (a string header and a slice header), charged to the call's budget.
const entryCost = 40

// charge takes n bytes of the call's budget for the fields; past it the
// call fails.
func (f *fields) charge(n uint64, what string) {
	if err := f.budget.Charge(n, what); err != nil {
		panic(err)
	}
	f.held += n
}

// release gives back n bytes of what the fields hold (an entry deleted).
func (f *fields) release(n uint64) {
	n = min(n, f.held)
	if f.budget != nil {
		f.budget.Release(n)
	}
	f.held -= n
}

// drop gives back what the fields held when the guest drops them.
func (f *fields) drop() { f.release(f.held) }

func validFieldName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

func validFieldValue(v []byte) bool {
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

// forbiddenHeader lists the headers the host sets itself.
func forbiddenHeader(n string) bool {
	switch strings.ToLower(n) {
	case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "http2-settings", "te":
		return true
	}
	return false
}

func (f *fields) add(name string, v []byte) *Var {
	if !validFieldName(name) || !validFieldValue(v) {
		e := fail(Var{headerInvalid, nil})
		return &e
	}
	if forbiddenHeader(name) {
		e := fail(Var{headerForbidden, nil})
		return &e
	}
	f.size += len(name) + len(v)
	if f.size > maxFieldBytes {
		trap("HTTP fields: more than %d bytes of names and values", maxFieldBytes)
	}
	f.charge(uint64(len(name)+len(v))+entryCost, "HTTP fields")
	f.names = append(f.names, name)
	f.values = append(f.values, append([]byte(nil), v...))
	return nil
}

func (f *fields) del(name string) {
	for i := 0; i < len(f.names); {
		if strings.EqualFold(f.names[i], name) {
			n := len(f.names[i]) + len(f.values[i])
			f.size -= n
			f.release(uint64(n) + entryCost)
			f.names = append(f.names[:i], f.names[i+1:]...)
			f.values = append(f.values[:i], f.values[i+1:]...)
			continue
		}
		i++
	}
}

func (f *fields) entries() Value {
	out := make([]Value, len(f.names))
	for i := range f.names {
		out[i] = []Value{f.names[i], f.values[i]}
	}
	return out
}

// fieldsFrom copies the headers of a response into new fields, charged
// to the call's budget.
func (st *call) fieldsFrom(h http.Header) *fields {
	f := &fields{immutable: true, budget: st.budget}
	for k, vs := range h {
		for _, v := range vs {
			f.charge(uint64(len(k)+len(v))+entryCost, "HTTP response headers")
			f.names = append(f.names, strings.ToLower(k))
			f.values = append(f.values, []byte(v))
		}
	}
	return f
}

func fieldsOf(a Value) *fields {
	f, ok := a.(*fields)
	if !ok {
		hostBug("fields is %T", a)
	}
	return f
}

type outgoingRequest struct {
	headers   *fields
	method    Var
	path      Var // option<string>
	scheme    Var // option<scheme>
	authority Var // option<string>
	body      *outgoingBody
	bodyTaken bool
}

type outgoingBody struct {
	buf bytes.Buffer
	// held is what buf charges to the call's budget, given back once
	// the request is sent.
	held     atomic.Uint64
	max      int64
	finished chan struct{}
	closed   bool
	overflow bool
	taken    bool
}

func (b *outgoingBody) drop() {
	if !b.closed {
		b.closed = true
		close(b.finished)
	}
}

// bodyWriter is the output stream of an outgoing body.
type bodyWriter struct{ b *outgoingBody }

func (w *bodyWriter) checkWrite(*call) (uint64, *Var) {
	if w.b.closed {
		v := streamClosed()
		return 0, &v
	}
	return maxIO, nil
}
func (w *bodyWriter) write(st *call, p []byte) *Var {
	if int64(w.b.buf.Len()+len(p)) > w.b.max {
		w.b.overflow = true
		v := fail(Var{0, &ioError{msg: "request body larger than the limit", fsCode: -1}})
		return &v
	}
	st.hold(uint64(len(p)), "an HTTP request body")
	w.b.held.Add(uint64(len(p)))
	w.b.buf.Write(p)
	return nil
}
func (w *bodyWriter) pollable() *pollable { return newReadyPollable() }

type requestOptions struct{ connect, firstByte, between Var }

// futureResponse is a request in flight.
type futureResponse struct {
	done  chan struct{}
	resp  *incomingResponse
	err   Var // error-code, when resp is nil
	taken bool
}

func (f *futureResponse) isDone() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

type incomingResponse struct {
	status  int
	headers http.Header
	body    []byte
	bodyErr *Var // error-code after the body (too large, cut short)
	taken   bool
	// held is what body charges to the call's budget, handed on to the
	// body's stream.
	held   uint64
	budget *hostmem.Budget
}

// drop gives back the body's charge if no stream took it.
func (r *incomingResponse) drop() {
	r.budget.Release(r.held)
	r.held, r.body = 0, nil
}

type incomingBody struct {
	r     *incomingResponse
	taken bool
}

type bodyReader struct {
	b    *incomingBody
	data []byte
	err  *Var
	// held is what data charges to the call's budget, given back once
	// it is read or the stream dropped.
	held uint64
}

func (r *bodyReader) drop() {
	r.b.r.budget.Release(r.held)
	r.held, r.data = 0, nil
}

func (r *bodyReader) read(_ *call, n uint64, _ bool) ([]byte, Var, bool) {
	if len(r.data) == 0 {
		if r.err != nil {
			e := fail(Var{0, &ioError{msg: "HTTP response body", fsCode: -1, http: r.err}})
			r.err = nil
			return nil, e, false
		}
		return nil, streamClosed(), false
	}
	k := min(n, uint64(len(r.data)), maxIO)
	out := r.data[:k]
	r.data = r.data[k:]
	if len(r.data) == 0 {
		r.drop() // out is lowered into the guest before the host call ends
	}
	return out, Var{}, true
}
func (r *bodyReader) pollable() *pollable { return newReadyPollable() }

type futureTrailers struct{ taken bool }

func httpErr(code uint32, payload Value) Var { return Var{code, payload} }

func internalErr(msg string) Var { return httpErr(hecInternal, some(msg)) }

// classifyHTTP maps a transport error to an error-code.
func classifyHTTP(err error) Var {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr):
		return httpErr(hecDNSError, []Value{some(dnsErr.Err), none()})
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return httpErr(hecConnTimeout, nil)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return httpErr(hecConnRefused, nil)
	case strings.Contains(err.Error(), "tls:"):
		return httpErr(hecTLSProtocol, nil)
	}
	return internalErr(err.Error())
}

// handle sends an outgoing request when its body is finished.
func (st *call) handleHTTP(req *outgoingRequest) Value {
	g := st.sb.HTTP
	scheme := "https"
	if req.scheme.Case == 1 {
		s := req.scheme.Val.(Var)
		switch s.Case {
		case 0:
			scheme = "http"
		case 1:
			scheme = "https"
		default:
			return fail(httpErr(hecRequestURIInvalid, nil))
		}
	}
	if req.authority.Case == 0 {
		return fail(httpErr(hecRequestURIInvalid, nil))
	}
	pathQuery := "/"
	if req.path.Case == 1 {
		pathQuery = req.path.Val.(string)
	}
	u, err := url.Parse(scheme + "://" + req.authority.Val.(string) + pathQuery)
	if err != nil || u.Host == "" || u.User != nil {
		return fail(httpErr(hecRequestURIInvalid, nil))
	}
	if g == nil || g.Allow == nil || !g.Allow(u) {
		if st.wasi.refusedAll++; len(st.wasi.refused) < maxRefusedKept {
			st.wasi.refused = append(st.wasi.refused, sandbox.Refused(u, redact.URL(u.String()), false))
		}
		return fail(httpErr(hecRequestDenied, nil))
	}
	st.wasi.requests++
	if st.wasi.requests > maxHTTPRequests {
		trap("more than %d HTTP requests in one call", maxHTTPRequests)
	}
	method := methodName(req.method)
	if method == "" {
		return fail(httpErr(18, nil)) // HTTP-request-method-invalid
	}
	maxBody := g.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxHTTPBody
	}
	transport := g.Transport
	if transport == nil {
		transport = defaultTransport()
	}
	fut := &futureResponse{done: make(chan struct{})}
	ctx := st.ctx
	headers := req.headers
	body := req.body
	budget := st.budget
	go func() {
		defer close(fut.done)
		if body != nil {
			// Sent (or given up): the host lets go of the body.
			defer func() { budget.Release(body.held.Swap(0)) }()
		}
		var rd io.Reader
		if body != nil {
			select {
			case <-body.finished:
			case <-ctx.Done():
				fut.err = httpErr(hecConnTimeout, nil)
				return
			}
			if body.overflow {
				fut.err = httpErr(hecRequestBodySize, some(uint64(body.buf.Len())))
				return
			}
			rd = bytes.NewReader(body.buf.Bytes())
		}
		hr, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
		if err != nil {
			fut.err = httpErr(hecRequestURIInvalid, nil)
			return
		}
		for i, n := range headers.names {
			hr.Header.Add(n, string(headers.values[i]))
		}
		resp, err := transport.RoundTrip(hr)
		if err != nil {
			fut.err = classifyHTTP(err)
			return
		}
		defer resp.Body.Close()
		cr := &chargedReader{r: io.LimitReader(resp.Body, maxBody+1), budget: budget}
		data, err := io.ReadAll(cr)
		r := &incomingResponse{status: resp.StatusCode, headers: resp.Header, held: cr.held, budget: budget}
		switch {
		case errors.Is(err, hostmem.ErrExceeded):
			// The budget remembers the refusal and fails the call.
			budget.Release(cr.held)
			fut.err = internalErr(err.Error())
			return
		case int64(len(data)) > maxBody:
			data = data[:maxBody]
			e := httpErr(hecResponseBodySize, some(uint64(maxBody)))
			r.bodyErr = &e
		case err != nil:
			e := httpErr(hecResponseIncomplete, nil)
			r.bodyErr = &e
		}
		r.body = data
		fut.resp = r
	}()
	return ok(fut)
}

// chargedReader charges what it reads to a call's budget.
type chargedReader struct {
	r      io.Reader
	budget *hostmem.Budget
	held   uint64
}

func (c *chargedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if e := c.budget.Charge(uint64(n), "an HTTP response body"); e != nil {
			return 0, e
		}
		c.held += uint64(n)
	}
	return n, err
}

// keepString charges the call's budget for the string in v (an option or
// a variant case), which a request keeps.
func (st *call) keepString(v Var, what string) Var {
	for x := v; ; {
		switch p := x.Val.(type) {
		case string:
			st.hold(uint64(len(p)), what)
			return v
		case Var:
			x = p
			continue
		}
		return v
	}
}

func methodName(m Var) string {
	names := []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
	if int(m.Case) < len(names) {
		return names[m.Case]
	}
	s, _ := m.Val.(string)
	if !validFieldName(s) {
		return ""
	}
	return s
}

func init() {
	immutable := func() Value { return fail(Var{headerImmutable, nil}) }
	register("wasi:http/types", map[string]hostFunc{
		"[constructor]fields": func(st *call, _ []Value) Value { return &fields{budget: st.budget} },
		"[static]fields.from-list": func(st *call, args []Value) Value {
			f := &fields{budget: st.budget}
			for _, e := range args[0].([]Value) {
				kv := e.([]Value)
				if err := f.add(kv[0].(string), kv[1].([]byte)); err != nil {
					return *err
				}
			}
			return ok(f)
		},
		"[method]fields.get": func(_ *call, args []Value) Value {
			f := fieldsOf(args[0])
			out := []Value{}
			for i, n := range f.names {
				if strings.EqualFold(n, args[1].(string)) {
					out = append(out, f.values[i])
				}
			}
			return out
		},
		"[method]fields.has": func(_ *call, args []Value) Value {
			for _, n := range fieldsOf(args[0]).names {
				if strings.EqualFold(n, args[1].(string)) {
					return true
				}
			}
			return false
		},
		"[method]fields.set": func(_ *call, args []Value) Value {
			f := fieldsOf(args[0])
			if f.immutable {
				return immutable()
			}
			name := args[1].(string)
			f.del(name)
			for _, v := range args[2].([]Value) {
				if err := f.add(name, v.([]byte)); err != nil {
					return *err
				}
			}
			return ok(nil)
		},
		"[method]fields.delete": func(_ *call, args []Value) Value {
			f := fieldsOf(args[0])
			if f.immutable {
				return immutable()
			}
			f.del(args[1].(string))
			return ok(nil)
		},
		"[method]fields.append": func(_ *call, args []Value) Value {
			f := fieldsOf(args[0])
			if f.immutable {
				return immutable()
			}
			if err := f.add(args[1].(string), args[2].([]byte)); err != nil {
				return *err
			}
			return ok(nil)
		},
		"[method]fields.entries": func(_ *call, args []Value) Value { return fieldsOf(args[0]).entries() },
		"[method]fields.clone": func(st *call, args []Value) Value {
			f := fieldsOf(args[0])
			// The clone shares the bytes of the entries; each clone is
			// charged for all of them all the same, so that cloning
			// again and again runs into the budget.
			c := &fields{size: f.size, budget: st.budget}
			c.charge(uint64(f.size)+uint64(len(f.names))*entryCost, "HTTP fields")
			c.names, c.values = append([]string(nil), f.names...), append([][]byte(nil), f.values...)
			return c
		},
		"[constructor]outgoing-request": func(_ *call, args []Value) Value {
			h := fieldsOf(args[0])
			h.immutable = true
			return &outgoingRequest{headers: h, method: Var{0, nil}, path: none(), scheme: none(), authority: none()}
		},
		"[method]outgoing-request.body": func(st *call, args []Value) Value {
			r := args[0].(*outgoingRequest)
			if r.bodyTaken {
				return fail(nil)
			}
			r.bodyTaken = true
			maxBody := int64(DefaultMaxHTTPBody)
			if st.sb.HTTP != nil && st.sb.HTTP.MaxBody > 0 {
				maxBody = st.sb.HTTP.MaxBody
			}
			r.body = &outgoingBody{max: maxBody, finished: make(chan struct{})}
			return ok(r.body)
		},
		"[method]outgoing-request.method":          func(_ *call, args []Value) Value { return args[0].(*outgoingRequest).method },
		"[method]outgoing-request.path-with-query": func(_ *call, args []Value) Value { return args[0].(*outgoingRequest).path },
		"[method]outgoing-request.scheme":          func(_ *call, args []Value) Value { return args[0].(*outgoingRequest).scheme },
		"[method]outgoing-request.authority":       func(_ *call, args []Value) Value { return args[0].(*outgoingRequest).authority },
		"[method]outgoing-request.headers": func(_ *call, args []Value) Value {
			r := args[0].(*outgoingRequest)
			return &fields{names: r.headers.names, values: r.headers.values, immutable: true}
		},
		"[method]outgoing-request.set-method": func(st *call, args []Value) Value {
			m := args[1].(Var)
			if methodName(m) == "" {
				return fail(nil)
			}
			args[0].(*outgoingRequest).method = st.keepString(m, "an HTTP request method")
			return ok(nil)
		},
		"[method]outgoing-request.set-path-with-query": func(st *call, args []Value) Value {
			args[0].(*outgoingRequest).path = st.keepString(args[1].(Var), "an HTTP request path")
			return ok(nil)
		},
		"[method]outgoing-request.set-scheme": func(st *call, args []Value) Value {
			args[0].(*outgoingRequest).scheme = st.keepString(args[1].(Var), "an HTTP request scheme")
			return ok(nil)
		},
		"[method]outgoing-request.set-authority": func(st *call, args []Value) Value {
			args[0].(*outgoingRequest).authority = st.keepString(args[1].(Var), "an HTTP request authority")
			return ok(nil)
		},
		"[constructor]request-options": func(*call, []Value) Value {
			return &requestOptions{none(), none(), none()}
		},
		"[method]request-options.connect-timeout":       func(_ *call, a []Value) Value { return a[0].(*requestOptions).connect },
		"[method]request-options.first-byte-timeout":    func(_ *call, a []Value) Value { return a[0].(*requestOptions).firstByte },
		"[method]request-options.between-bytes-timeout": func(_ *call, a []Value) Value { return a[0].(*requestOptions).between },
		"[method]request-options.set-connect-timeout": func(_ *call, a []Value) Value {
			a[0].(*requestOptions).connect = a[1].(Var)
			return ok(nil)
		},
		"[method]request-options.set-first-byte-timeout": func(_ *call, a []Value) Value {
			a[0].(*requestOptions).firstByte = a[1].(Var)
			return ok(nil)
		},
		"[method]request-options.set-between-bytes-timeout": func(_ *call, a []Value) Value {
			a[0].(*requestOptions).between = a[1].(Var)
			return ok(nil)
		},
		"[method]outgoing-body.write": func(_ *call, args []Value) Value {
			b := args[0].(*outgoingBody)
			if b.taken {
				return fail(nil)
			}
			b.taken = true
			return ok(&bodyWriter{b})
		},
		"[static]outgoing-body.finish": func(_ *call, args []Value) Value {
			b := args[0].(*outgoingBody)
			b.drop()
			if b.overflow {
				return fail(httpErr(hecRequestBodySize, some(uint64(b.buf.Len()))))
			}
			return ok(nil)
		},
		"[method]future-incoming-response.subscribe": func(_ *call, args []Value) Value {
			f := args[0].(*futureResponse)
			return &pollable{ready: f.isDone, wait: func() <-chan struct{} { return f.done }}
		},
		"[method]future-incoming-response.get": func(_ *call, args []Value) Value {
			f := args[0].(*futureResponse)
			if !f.isDone() {
				return none()
			}
			if f.taken {
				return some(fail(nil))
			}
			f.taken = true
			if f.resp == nil {
				return some(ok(fail(f.err)))
			}
			return some(ok(ok(f.resp)))
		},
		"[method]incoming-response.status": func(_ *call, args []Value) Value {
			return uint64(args[0].(*incomingResponse).status)
		},
		"[method]incoming-response.headers": func(st *call, args []Value) Value {
			r := args[0].(*incomingResponse)
			return st.fieldsFrom(r.headers)
		},
		"[method]incoming-response.consume": func(_ *call, args []Value) Value {
			r := args[0].(*incomingResponse)
			if r.taken {
				return fail(nil)
			}
			r.taken = true
			return ok(&incomingBody{r: r})
		},
		"[method]incoming-body.stream": func(_ *call, args []Value) Value {
			b := args[0].(*incomingBody)
			if b.taken {
				return fail(nil)
			}
			b.taken = true
			rd := &bodyReader{b: b, data: b.r.body, err: b.r.bodyErr, held: b.r.held}
			b.r.body, b.r.held = nil, 0
			return ok(rd)
		},
		"[static]incoming-body.finish": func(_ *call, args []Value) Value { return &futureTrailers{} },
		"[method]future-trailers.subscribe": func(_ *call, args []Value) Value {
			return newReadyPollable()
		},
		"[method]future-trailers.get": func(_ *call, args []Value) Value {
			t := args[0].(*futureTrailers)
			if t.taken {
				return some(fail(nil))
			}
			t.taken = true
			return some(ok(ok(none())))
		},
		"http-error-code": func(_ *call, args []Value) Value {
			if e, ok := args[0].(*ioError); ok && e.http != nil {
				return some(*e.http)
			}
			return none()
		},
	})
	register("wasi:http/outgoing-handler", map[string]hostFunc{
		"handle": func(st *call, args []Value) Value {
			return st.handleHTTP(args[0].(*outgoingRequest))
		},
	})
}
