// Package httpserve serves an mcpserve.Server as streamable HTTP, the
// transport of `agenthost mcp serve --http`: the bearer token, the checks
// against DNS rebinding and cross-origin browsers, the limits on
// connections, sessions, slow and large requests (Limits), and the
// bounded store of events that lets a client resume a dropped stream.
// The command line turns its flags into Limits and calls Serve.
package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/mcpserve"
)

// Limits bound what the HTTP clients of `mcp serve --http` can hold:
// a client without the token, or one that sends slowly, must not keep a
// connection, a goroutine or a session for long, and many of them must
// not lock the real client out.
//
// There is no write timeout: a tool call or a served agent answers on its
// POST's event stream for as long as it runs (minutes), and the GET event
// stream of a session stays open while the session lives. What bounds a
// stalled reader is the connection cap.
type Limits struct {
	// ReadTimeout bounds the arrival of a request's headers, and then of
	// its body: a connection that sends nothing, or trickles, is closed.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no next
	// request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431 beyond).
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request's body (413 beyond).
	MaxBodyBytes int64
	// MaxConns bounds the connections open at once; one more is answered
	// 503 and closed.
	MaxConns int
	// MaxSessions bounds the MCP sessions open at once; a request for a
	// new one is answered 503.
	MaxSessions int
	// SessionTimeout closes an MCP session that has had no request for
	// that long; 0 never does.
	SessionTimeout time.Duration
	// ResumeBuffer bounds the bytes of events one session keeps for a
	// client that resumes a dropped event stream (eventStore); 0 keeps
	// none, and streams cannot be resumed.
	ResumeBuffer int64
	// ResumeBufferTotal bounds the bytes of events all sessions keep.
	ResumeBufferTotal int64
}

// DefaultLimits are the limits of `mcp serve --http`; the flags
// --read-timeout, --max-conns, --max-sessions, --session-timeout,
// --resume-buffer and --resume-buffer-total change six of them
// (docs/security.md, "Limits at a glance"). A session's resume buffer
// holds several results of the default max_output (1 MiB); the total
// holds eight full session buffers.
func DefaultLimits() Limits {
	return Limits{
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		MaxBodyBytes:      mcp.DefaultMaxRequestBodyBytes,
		MaxConns:          128,
		MaxSessions:       100,
		SessionTimeout:    time.Hour,
		ResumeBuffer:      8 << 20,
		ResumeBufferTotal: 64 << 20,
	}
}

// MinResumeBuffer is the smallest resume buffer (Limits.ResumeBuffer)
// other than 0: a few events with their overhead.
const MinResumeBuffer = 1 << 10

// Serve serves srv as streamable HTTP at /mcp on ln until ctx ends, then
// shuts the server down (waiting a few seconds for the requests under
// way). It logs the URL it serves (a port chosen by the system with ":0"
// too). token, when not "", is the bearer token every request must carry.
func Serve(ctx context.Context, srv *mcpserve.Server, ln net.Listener, token string, limits Limits, logger *zerolog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", NewHandler(srv, token, limits, logger))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: limits.ReadTimeout,
		IdleTimeout:       limits.IdleTimeout,
		MaxHeaderBytes:    limits.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	url := fmt.Sprintf("http://%s/mcp", ln.Addr())
	logger.Info().Str("url", url).Bool("token", token != "").
		Int("max_conns", limits.MaxConns).Int("max_sessions", limits.MaxSessions).
		Str("session_timeout", limits.SessionTimeout.String()).Str("read_timeout", limits.ReadTimeout.String()).
		Int64("resume_buffer", limits.ResumeBuffer).Int64("resume_buffer_total", limits.ResumeBufferTotal).
		Msg("serving MCP over HTTP")
	if err := hs.Serve(newConnLimiter(ln, limits.MaxConns, logger)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the HTTP handler of `mcp serve --http` in front of the SDK's
// streamable HTTP handler.
type Handler struct {
	srv    *mcpserve.Server
	sdk    http.Handler
	events *eventStore // nil when streams are not resumable
	want   []byte      // "Bearer TOKEN"; nil when no token is required
	cop    *http.CrossOriginProtection
	limits Limits
	log    *zerolog.Logger

	mu sync.Mutex // held while a session is counted and initialized (capSessions)
}

// NewHandler is the HTTP handler of srv. Every request is checked from
// its headers alone, before its body is read: a non-loopback Host on a
// loopback address (DNS rebinding) and a cross-origin browser request are
// refused (403), a request without the bearer token (when token is set)
// too (401). A refused request is answered at once and its connection
// closed, whatever of its body is still to come. Then the body is read
// within limits.ReadTimeout, a request that would open a session past
// limits.MaxSessions is refused (openSession, capSessions), and the
// request goes to the SDK's handler. A client
// ending its session (DELETE) cancels the session's calls first, once it
// has passed the checks. With a resume buffer (limits.ResumeBuffer > 0)
// the events of every stream are kept in an eventStore, each stream's
// first event carries the retry field, and a client resumes a dropped
// stream with a GET and Last-Event-ID.
func NewHandler(srv *mcpserve.Server, token string, limits Limits, log *zerolog.Logger) *Handler {
	opts := &mcp.StreamableHTTPOptions{
		SessionTimeout:      limits.SessionTimeout,
		MaxRequestBodyBytes: limits.MaxBodyBytes,
	}
	f := &Handler{
		srv:    srv,
		cop:    http.NewCrossOriginProtection(),
		limits: limits,
		log:    log,
	}
	if limits.ResumeBuffer > 0 {
		f.events = newEventStore(limits.ResumeBuffer, limits.ResumeBufferTotal)
		opts.EventStore = f.events
	}
	srv.Server.AddReceivingMiddleware(f.capSessions)
	f.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, opts)
	if token != "" {
		f.want = []byte("Bearer " + token)
	}
	return f
}

func (f *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A web page in the user's browser must not drive a local server:
	// a loopback connection must name a loopback host (a rebound DNS name
	// names the attacker's), and cross-origin browser requests are
	// refused. The SDK checks the Host too, but only once the request
	// reaches it.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && hostIsLoopback(la.String()) && !hostIsLoopback(r.Host) {
		f.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host))
		return
	}
	if err := f.cop.Check(r); err != nil {
		f.refuse(w, r, http.StatusForbidden, err.Error())
		return
	}
	if f.want != nil && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(r.Header.Get("Authorization"))), f.want) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agenthost"`)
		f.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	if !f.readBody(w, r) {
		return
	}
	if f.events != nil {
		w = &retryWriter{ResponseWriter: w}
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		f.openSession(w, r)
		return
	}
	if r.Method == http.MethodDelete {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			f.srv.CancelSession(id)
		}
	}
	f.sdk.ServeHTTP(w, r)
}

// openSession serves a POST without a session id: the SDK opens a session
// for it, whatever its body holds, and keeps the session once a method of
// the request has initialized it (it closes the others when they are
// answered). The body is not looked at here (another parser would read
// some bodies otherwise than the SDK does): when limits.MaxSessions
// sessions are open the request is refused (503), and capSessions keeps
// the ones let through that race each other from initializing more.
func (f *Handler) openSession(w http.ResponseWriter, r *http.Request) {
	if n := f.sessions(); n >= f.limits.MaxSessions {
		w.Header().Set("Retry-After", "10")
		f.refuse(w, r, http.StatusServiceUnavailable, f.tooMany(n))
		return
	}
	f.sdk.ServeHTTP(w, r)
}

// capSessions is the server's middleware that bounds the sessions where
// the SDK initializes them: a method (initialize, as the SDK reads it) on
// a session not yet initialized is handled while f.mu is held, and
// refused with a JSON-RPC error when limits.MaxSessions sessions are
// initialized already; the SDK then closes the session once the request
// is answered. So no body, however written, makes one more session, and
// the sessions counted are exact. A session that is initialized is logged
// (MCP session opened), and so is its end.
func (f *Handler) capSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok || ss.InitializeParams() != nil {
			return next(ctx, method, req)
		}
		opened := false
		res, err := func() (mcp.Result, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if ss.InitializeParams() != nil { // by a method handled meanwhile
				return next(ctx, method, req)
			}
			if n := f.sessions(); n >= f.limits.MaxSessions {
				return nil, errors.New(f.tooMany(n))
			}
			res, err := next(ctx, method, req)
			opened = ss.InitializeParams() != nil
			return res, err
		}()
		if opened {
			f.watchSession(ss)
		}
		return res, err
	}
}

// tooMany says that n sessions are open, past limits.MaxSessions, and
// logs it.
func (f *Handler) tooMany(n int) string {
	msg := fmt.Sprintf("too many MCP sessions: %d are open (--max-sessions %d); end one (HTTP DELETE with its Mcp-Session-Id) or wait until an idle one expires", n, f.limits.MaxSessions)
	if f.limits.SessionTimeout > 0 {
		msg += fmt.Sprintf(" (--session-timeout %s)", f.limits.SessionTimeout)
	}
	f.log.Warn().Int("sessions", n).Int("max_sessions", f.limits.MaxSessions).Msg("new MCP session refused: at --max-sessions")
	return msg
}

// refuse answers r with code and msg without reading its body, and closes
// the connection: net/http would otherwise read what is left of the body
// (up to 256 KiB) before answering, or after, and a client that sends
// part of it would hold the connection for as long as it likes.
func (f *Handler) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Connection", "close")
	if r.Body != nil && r.Body != http.NoBody {
		http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	http.Error(w, msg, code)
}

// readBody reads r's body, at most limits.MaxBodyBytes, within
// limits.ReadTimeout, and puts it back in r for the SDK. The deadline is
// lifted once the body is in: the connection then stays open for as long
// as the answer streams. It answers r itself and returns false when the
// body does not arrive whole in time or is too big.
func (f *Handler) readBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(f.limits.ReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.limits.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			f.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
		case errors.As(err, &ne) && ne.Timeout():
			f.refuse(w, r, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s", f.limits.ReadTimeout))
		default:
			f.refuse(w, r, http.StatusBadRequest, "reading the request body: "+err.Error())
		}
		return false
	}
	rc.SetReadDeadline(time.Time{})
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// sessions counts the open MCP sessions: those initialized. A request
// without a session that does not initialize one (a newer client's
// server/discover, say) gets a session of its own that the SDK closes
// once it is answered.
func (f *Handler) sessions() int {
	n := 0
	for ss := range f.srv.Server.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// watchSession logs the start of the session ss, and its end (a DELETE,
// its expiry), with the number of sessions left open.
func (f *Handler) watchSession(ss *mcp.ServerSession) {
	f.log.Info().Int("sessions", f.sessions()).Msg("MCP session opened")
	go func() {
		ss.Wait()
		f.log.Info().Int("sessions", f.sessions()).Msg("MCP session closed")
	}()
}

// hostIsLoopback reports whether hostport (host:port, or a host alone)
// names the loopback interface: "localhost" or a loopback IP literal.
func hostIsLoopback(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = strings.Trim(hostport, "[]")
	}
	return IsLoopbackHost(h)
}

// IsLoopbackHost reports whether h names only the loopback interface: an
// IP literal of it, or "localhost". "" (every interface) is not.
func IsLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// connLimiter is a listener that keeps at most max accepted connections
// open. One more is answered "503 Service Unavailable" and closed at once,
// so that a client sees why; closing is bounded too (a second and a few
// KiB of what the client sent), and at most max refusals run at a time,
// beyond which a connection is closed without an answer.
type connLimiter struct {
	net.Listener
	slots    chan struct{}
	refusing chan struct{}
	max      int
	log      *zerolog.Logger
	warned   atomic.Int64 // unix time of the last warning
}

func newConnLimiter(ln net.Listener, max int, log *zerolog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, slots: make(chan struct{}, max), refusing: make(chan struct{}, max), max: max, log: log}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		if now := time.Now().Unix(); l.warned.Load() < now-60 {
			l.warned.Store(now)
			l.log.Warn().Int("max_conns", l.max).Msg("refusing connections: at --max-conns")
		}
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuseConn(c, l.max)
			}()
		default:
			c.Close()
		}
	}
}

// refuseConn answers c with a 503 and closes it. It reads the request's
// headers first (within a second, at most 64 KiB), so that the answer
// comes as the answer to it rather than before it, then writes the answer,
// closes the write side and drops what else the client sent (closing with
// unread data would reset the connection, and the client could lose the
// answer).
func refuseConn(c net.Conn, max int) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	br := bufio.NewReader(io.LimitReader(c, 64<<10))
	for {
		line, err := br.ReadSlice('\n')
		if err != nil || len(bytes.TrimRight(line, "\r\n")) == 0 {
			break
		}
	}
	msg := fmt.Sprintf("too many connections (--max-conns %d); try again later\n", max)
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// limitedConn gives its slot back when it is closed, before the socket
// is: a client that sees the end of its connection finds the slot free.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// CloseWrite lets net/http half-close the connection as it does a plain
// TCP one.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// CheckListenAddr refuses an address that is not host:port, and one that
// is not loopback when no token protects it.
func CheckListenAddr(addr string, withToken bool) error {
	hostPart, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("not host:port (%v); for example 127.0.0.1:8808", err)
	}
	if withToken || IsLoopbackHost(hostPart) {
		return nil
	}
	return errors.New("not a loopback address and no token: listen on 127.0.0.1 or [::1], or pass --token-env VAR so clients must send the token in VAR")
}
