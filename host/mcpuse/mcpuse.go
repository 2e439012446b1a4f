// Package mcpuse calls the tools of an external MCP server, for agents
// (the use side of MCP: host wires `mcp_server` blocks to it). It
// speaks the protocol with the official Go SDK.
//
// An MCP server is NOT sandboxed: it is an ordinary process (or a remote
// service) with the rights it was started with; none of a plugin's grants,
// mounts or limits apply to it. What this package bounds is the host's
// side: every request waits at most Spec.Timeout, a server that dies is
// restarted once, what is read from it is bounded (strings cut past
// Spec.MaxOutput as they stream in, each message bounded: cut.go), the
// block's headers go to the url's origin only, and whatever the server
// does (hang, crash, garbage on stdout, a result of any size) gives an
// error or a cut result, never a panic, a stuck run or unbounded memory.
// Messages never show the url's credentials (internal/redact).
package mcpuse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/loop"
)

// DefaultTimeout bounds a request (start and listing included) when
// Spec.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Spec is one MCP server.
type Spec struct {
	// Name names the server in messages and logs ("fs").
	Name string
	// Command starts a stdio server: the program and its arguments.
	Command []string
	// Env is added to the server process's environment (which is
	// otherwise agenthost's own). Dir is its working directory.
	Env map[string]string
	Dir string
	// URL is a streamable HTTP server, instead of Command; Headers are
	// sent with every request to its origin (scheme, host and port). A
	// redirect to another origin is refused.
	URL     string
	Headers map[string]string
	// Tools, when not nil, is the allowlist of the server's tools offered.
	Tools []string
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxOutput is the bytes of a result's text kept (the rest is cut with
	// a note); 0 means defaults.MCPMaxOutput.
	MaxOutput int64
	// Stderr receives the server process's stderr; nil discards it.
	Stderr io.Writer
	// OAuth, for a url server, gets tokens when the server asks for them
	// (a 401); nil sends requests with Headers only.
	OAuth *OAuth
	// Elicit answers the server's questions to the user
	// (elicitation/create); nil declines every one.
	Elicit Elicitor
	// Roots are the directories (absolute paths) the server is told it may
	// see (roots/list); none by default, and then no roots capability is
	// advertised.
	Roots []string
	// Sample serves the server's sampling requests (sampling/createMessage)
	// with the model of the agent whose call the server is serving; nil
	// advertises no sampling and refuses them.
	Sample Sampler
	// ToolsListed, when set, is called (on a goroutine of its own) each
	// time the tools were listed again after the server said they changed.
	ToolsListed func()
}

// Sampler serves an MCP server's sampling request. ctx is the tool call's
// when the request comes with the call (a multi round-trip request).
type Sampler interface {
	Sample(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

// Elicitor answers an MCP server's elicitation/create: it asks the user
// (on a terminal), or passes the question on (to the client of an
// agenthost that is itself serving MCP). What the server sends is
// untrusted: its text is escaped and bounded where it is shown.
type Elicitor interface {
	Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// maxRetries bounds the reconnections of a url server's event stream that
// closed (the SDK waits the server's retry delay, else a growing backoff,
// between them); each request is bounded by Spec.Timeout besides.
const maxRetries = 5

// Server is a connection to one MCP server, made at first use. It is safe
// for concurrent use: calls are sent concurrently on one connection.
type Server struct {
	spec Spec
	log  zerolog.Logger
	// scrub hides the url's credentials, and credential-like header
	// values, in every message (an error of net/http quotes the URL).
	scrub *redact.Replacer
	// tooBig is the last errMessageTooBig of a read, to explain the end of
	// a connection.
	tooBig atomic.Pointer[error]

	mu       sync.Mutex
	cs       *mcp.ClientSession
	starts   int
	dead     error // why the last session ended, for messages
	closed   bool
	tools    []*mcp.Tool
	toolsErr error
	// gen counts the server's notifications/tools/list_changed, listedGen
	// is the gen the stored tools were listed after: they are listed again
	// at once (toolsChanged), or by a call that comes before that listing
	// is stored. changed makes each call check that its tool is still
	// offered; refreshing is set while toolsChanged lists them.
	gen, listedGen      int
	changed, refreshing bool
	// ended is closed once the current session's end has been noticed.
	ended chan struct{}
	// http is the HTTP transport of a url server (nil for a stdio one): it
	// remembers a refusal (401, 403) to explain it.
	http *headerTransport
	// oauth gets the tokens of a url server with Spec.OAuth.
	oauth *oauthHandler
}

// New returns the server of spec; nothing is started yet.
func New(spec Spec, log zerolog.Logger) *Server {
	spec.Timeout = defaults.Or(spec.Timeout, DefaultTimeout)
	spec.MaxOutput = defaults.Or(spec.MaxOutput, defaults.MCPMaxOutput)
	s := &Server{spec: spec, log: log.With().Str("mcp_server", spec.Name).Logger()}
	secrets := redact.HeaderSecrets(spec.Headers)
	if spec.OAuth != nil && spec.OAuth.ClientSecret != "" {
		secrets = append(secrets, spec.OAuth.ClientSecret)
	}
	s.scrub = redact.NewURLReplacer(spec.URL, secrets...)
	if spec.URL != "" && spec.OAuth != nil {
		s.oauth = newOAuthHandler(s, spec.OAuth)
	}
	if spec.URL != "" {
		o := ""
		if u, err := url.Parse(spec.URL); err == nil {
			o = origin(u)
		}
		s.http = &headerTransport{h: spec.Headers, origin: o, server: s}
	}
	return s
}

// errorf is an error whose text has no credential of the block, and
// quotes the errors among a (what the server, its authorization server or
// the SDK said) cut and escaped (quoted).
func (s *Server) errorf(format string, a ...any) error {
	return errors.New(s.scrub.Replace(fmt.Sprintf(format, s.quoteErrors(a)...)))
}

// errResult is an error result whose text has no credential of the block,
// the errors among a quoted as errorf quotes them.
func (s *Server) errResult(format string, a ...any) loop.ToolResult {
	return loop.ToolResult{Content: s.scrub.Replace(fmt.Sprintf(format, s.quoteErrors(a)...)), IsError: true}
}

// cut reads r through a cutReader of the server's limits. A message over
// the limit is remembered, to explain the error it causes: in the call's
// note when the response is a call's (over HTTP), else in the server (the
// connection ends).
func (s *Server) cut(r io.Reader, mode cutMode, n *cancelNote) io.Reader {
	return &noteTooBig{r: newCutReader(r, stringLimit(s.spec.MaxOutput), messageLimit(s.spec.MaxOutput), mode), s: s, n: n}
}

type noteTooBig struct {
	r    io.Reader
	s    *Server
	n    *cancelNote
	once sync.Once
}

func (t *noteTooBig) Read(p []byte) (int, error) {
	k, err := t.r.Read(p)
	if errors.Is(err, errMessageTooBig) {
		t.once.Do(func() {
			if t.n != nil {
				t.n.tooBig.Store(&err)
			} else {
				t.s.tooBig.Store(&err)
			}
			t.s.log.Warn().Str("error", err.Error()).Msg("MCP server message too big")
		})
	}
	return k, err
}

// why explains the error msg of a call (n) or of the connection (n nil):
// the message that was too big, when there was one and msg does not say
// so already. The server's record is used once.
func (s *Server) why(n *cancelNote, msg string) string {
	var e *error
	if n != nil {
		e = n.tooBig.Load()
	}
	if e == nil {
		e = s.tooBig.Swap(nil)
	}
	if e == nil || strings.Contains(msg, (*e).Error()) {
		return ""
	}
	return " (" + (*e).Error() + ")"
}

// maxStarts is how many times a server is started in the host's life: the
// first start and one restart after it died.
const maxStarts = 2

// session returns the live session, starting the server when there is
// none (at first use, or once after it died), and the channel closed once
// the session's end has been noticed.
func (s *Server) session(ctx context.Context) (*mcp.ClientSession, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, fmt.Errorf("MCP server %q: the host is closing", s.spec.Name)
	}
	if s.cs != nil {
		return s.cs, s.ended, nil
	}
	if s.starts >= maxStarts {
		return nil, nil, s.errorf("MCP server %q stopped (%v) after it was restarted once; it is not started again", s.spec.Name, s.dead)
	}
	s.starts++
	if s.starts > 1 {
		s.log.Warn().Str("cause", s.errorf("%v", s.dead).Error()).Msg("restarting MCP server")
	}
	s.tooBig.Store(nil)
	timeout := s.spec.Timeout
	if s.oauth != nil && s.oauth.mayLogin() {
		// A person logs in at the first request: give them the time.
		timeout = max(timeout, LoginTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agenthost", Version: "1"}, s.clientOptions())
	if roots := s.roots(); len(roots) > 0 {
		client.AddRoots(roots...)
	}
	t, err := s.transport()
	if err != nil {
		return nil, nil, err
	}
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		s.dead = err
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, s.errorf("MCP server %q did not start within %s: %v%s", s.spec.Name, timeout, err, s.refusal())
		}
		return nil, nil, s.errorf("MCP server %q did not start: %v%s%s", s.spec.Name, err, s.refusal(), s.why(nil, err.Error()))
	}
	s.cs = cs
	ended := make(chan struct{})
	s.ended = ended
	go func() {
		err := cs.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		defer close(ended)
		if s.cs == cs {
			s.cs = nil
			if err == nil {
				err = errors.New("the connection closed")
			}
			s.dead = err
			if !s.closed {
				s.log.Warn().Str("error", s.errorf("%v", err).Error()).Msg("MCP server stopped")
			}
		}
	}()
	s.log.Info().Msg("MCP server started")
	return cs, ended, nil
}

func (s *Server) transport() (mcp.Transport, error) {
	switch {
	case len(s.spec.Command) > 0:
		cmd := exec.Command(s.spec.Command[0], s.spec.Command[1:]...)
		cmd.Dir = s.spec.Dir
		cmd.Env = os.Environ()
		for k, v := range s.spec.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = s.spec.Stderr
		return noteTransport{&stdioTransport{cmd: cmd, server: s, terminate: 2 * time.Second}}, nil
	case s.http != nil:
		hc := &http.Client{Transport: s.http, CheckRedirect: s.http.checkRedirect}
		t := &mcp.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: hc, MaxRetries: maxRetries,
			MaxEventSize: int(messageLimit(s.spec.MaxOutput) + 1<<20)}
		if s.oauth != nil {
			t.OAuthHandler = s.oauth
		}
		return t, nil
	}
	return nil, fmt.Errorf("MCP server %q has neither a command nor a URL", s.spec.Name)
}

// headerTransport adds the block's headers to every request to the url's
// origin, reads every response through the server's cutReader, and notes
// the last refusal of the server (401 or 403) for messages.
type headerTransport struct {
	h       map[string]string
	origin  string // of the url: "scheme://host:port"
	server  *Server
	refused atomic.Int32 // the status of the last refusal, 0 when none
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The headers carry credentials: never to another origin, whatever
	// made the request (checkRedirect refuses such redirects already).
	if len(t.h) > 0 && origin(r.URL) == t.origin {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		t.refused.Store(int32(resp.StatusCode))
	}
	if err == nil {
		mode := oneMessage
		if ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); strings.EqualFold(strings.TrimSpace(ct), "text/event-stream") {
			mode = lineMessages
		}
		resp.Body = readCloser{t.server.cut(resp.Body, mode, noteOf(r.Context())), resp.Body}
	}
	// The notifications/cancelled of a call is a POST made with the
	// call's context values once the call was cancelled.
	if n := noteOf(r.Context()); n != nil && err == nil && r.Method == http.MethodPost && n.call.Err() != nil && isCancelNote(r) {
		n.sent()
	}
	return resp, err
}

// checkRedirect follows a redirect within the url's origin only: the
// block's headers are for that origin, and a request to another one
// without them would fail in a misleading way (a 401 blamed on the url).
func (t *headerTransport) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != t.origin {
		return fmt.Errorf("redirected to %s, another origin than the url's (%s): agenthost follows redirects within the url's origin only, so that the block's headers go nowhere else; if the new address is the server's, set url to it",
			redact.URL(req.URL.String()), t.origin)
	}
	return nil
}

// origin is "scheme://host:port" of u (the scheme's port when it has none,
// scheme and host in lower case).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// isCancelNote reports whether the body of r is a notifications/cancelled.
func isCancelNote(r *http.Request) bool {
	if r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 1<<16))
	return err == nil && bytes.Contains(b, []byte(`"method":"notifications/cancelled"`))
}

// refusal explains, after an error, a refusal of an HTTP server: "" when
// there was none.
func (s *Server) refusal() string {
	if s.http == nil {
		return ""
	}
	code := int(s.http.refused.Load())
	if code == 0 {
		return ""
	}
	if s.oauth != nil {
		return fmt.Sprintf(" (the server answered %d %s to %s)", code, http.StatusText(code), redact.URL(s.spec.URL))
	}
	return fmt.Sprintf(" (the server answered %d %s to %s: it wants other credentials; check the headers of the mcp_server block, Authorization for example)",
		code, http.StatusText(code), redact.URL(s.spec.URL))
}

// Tools lists the server's tools (starting it when needed), narrowed to
// Spec.Tools; an allowlisted tool the server does not have is an error.
// The list is read once and kept.
func (s *Server) Tools(ctx context.Context) ([]loop.ToolSpec, error) {
	s.mu.Lock()
	tools, terr := s.tools, s.toolsErr
	s.mu.Unlock()
	if tools == nil && terr == nil {
		tools, terr = s.listTools(ctx)
		s.mu.Lock()
		s.tools, s.toolsErr = tools, terr
		s.mu.Unlock()
	}
	if terr != nil {
		return nil, terr
	}
	out := make([]loop.ToolSpec, 0, len(tools))
	for _, t := range tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		spec := loop.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: schema}
		if t.Annotations != nil {
			if b, err := json.Marshal(t.Annotations); err == nil && len(b) <= maxToolMeta {
				spec.Annotations = b
			}
		}
		if t.OutputSchema != nil {
			if b, err := json.Marshal(t.OutputSchema); err == nil && len(b) <= maxToolMeta && string(b) != "null" {
				spec.OutputSchema = b
			}
		}
		out = append(out, spec)
	}
	return out, nil
}

// maxToolMeta bounds the JSON of a tool's annotations and of its output
// schema kept to offer on (mcp serve); larger ones are dropped.
const maxToolMeta = 64 << 10

func (s *Server) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	cs, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.spec.Timeout)
	defer cancel()
	var all []*mcp.Tool
	for t, err := range cs.Tools(cctx, nil) {
		if err != nil {
			return nil, s.errorf("MCP server %q: listing its tools: %v%s", s.spec.Name, err, s.why(nil, err.Error()))
		}
		all = append(all, t)
	}
	if s.spec.Tools == nil {
		return all, nil
	}
	byName := map[string]*mcp.Tool{}
	var names []string
	for _, t := range all {
		byName[t.Name] = t
		names = append(names, t.Name)
	}
	out := []*mcp.Tool{}
	for _, n := range s.spec.Tools {
		t, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("MCP server %q has no tool %q; its tools are: %s", s.spec.Name, n, strings.Join(names, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// relist lists the tools again when the server said they changed and they
// were not listed since, and says why tool cannot be called when the
// server no longer offers it; "" when it can be.
func (s *Server) relist(ctx context.Context, tool string) string {
	s.mu.Lock()
	changed, g, stale := s.changed, s.gen, s.listedGen != s.gen
	s.mu.Unlock()
	if !changed {
		return ""
	}
	if stale {
		tools, err := s.listTools(ctx)
		s.storeTools(g, tools, err)
	}
	s.mu.Lock()
	tools, terr := s.tools, s.toolsErr
	s.mu.Unlock()
	if terr != nil {
		return terr.Error()
	}
	var names []string
	for _, t := range tools {
		if t.Name == tool {
			return ""
		}
		names = append(names, t.Name)
	}
	return fmt.Sprintf("MCP server %q no longer offers tool %q (its tools changed); it offers: %s", s.spec.Name, tool, strings.Join(names, ", "))
}

// Call calls the server's tool call.Name (without any prefix) within
// Spec.Timeout. The server's error results are error results; a server
// that does not answer in time, dies or answers garbage gives an error
// result saying so (the error return is for a cancelled ctx only).
func (s *Server) Call(ctx context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	args := strings.TrimSpace(call.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return s.errResult("invalid arguments for tool %q: not valid JSON", call.Name), nil
	}
	cs, ended, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return loop.ToolResult{}, ctx.Err()
		}
		return s.errResult("%v", err), nil
	}
	if msg := s.relist(ctx, call.Name); msg != "" {
		return s.errResult("%s", msg), nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.spec.Timeout)
	defer cancel()
	note := &cancelNote{done: make(chan struct{})}
	cctx = context.WithValue(cctx, cancelKey{}, note)
	note.call = cctx
	params := &mcp.CallToolParams{Name: call.Name, Arguments: json.RawMessage(args)}
	res, err := cs.CallTool(cctx, params)
	if errors.Is(err, mcp.ErrConnectionClosed) && cctx.Err() == nil {
		// The call was not sent: the connection had already ended (the
		// server died after an earlier call, before its end was
		// noticed). Once it is noticed, the call goes to the restarted
		// server, when it may be restarted.
		select {
		case <-ended:
		case <-cctx.Done():
		}
		if cctx.Err() == nil {
			if cs, _, err = s.session(ctx); err != nil {
				return s.errResult("%v", err), nil
			}
			res, err = cs.CallTool(cctx, params)
		}
	}
	switch {
	case err == nil:
		return toResult(res, s.spec.MaxOutput), nil
	case ctx.Err() != nil:
		note.wait()
		return loop.ToolResult{}, ctx.Err()
	case cctx.Err() != nil:
		s.log.Warn().Str("tool", call.Name).Dur("timeout", s.spec.Timeout).Msg("MCP tool call timed out")
		return s.errResult("MCP server %q: tool %q gave no result within %s", s.spec.Name, call.Name, s.spec.Timeout), nil
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return s.errResult("MCP server %q stopped during the call of tool %q: %v%s", s.spec.Name, call.Name, err, s.why(note, err.Error())), nil
	}
	return s.errResult("MCP server %q: tool %q: %v%s%s", s.spec.Name, call.Name, err, s.refusal(), s.why(note, err.Error())), nil
}

// toResult turns an MCP result into a tool result: its text contents
// joined, other contents named, the structured content when there is no
// text; all of it cut to maxOutput bytes with a note (capResult).
func toResult(res *mcp.CallToolResult, maxOutput int64) loop.ToolResult {
	var parts []string
	rich := false
	for _, c := range res.Content {
		if _, text := c.(*mcp.TextContent); !text {
			rich = true
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := loop.ToolResult{Content: capResult(parts, maxOutput), IsError: res.IsError}
	if rich {
		out.MCP = passItems(res.Content, maxOutput)
	}
	if res.StructuredContent != nil {
		// Passed on whole or not at all: a cut value is no longer valid.
		if b, err := json.Marshal(res.StructuredContent); err == nil && int64(len(b)) <= maxOutput {
			out.Structured = b
		}
	}
	return out
}

// maxItems bounds the MCP content items of one result passed on.
const maxItems = 64

// passItems is the JSON of a result's content items, to pass on to the
// front end (mcp serve), or nil when they are more than maxItems, larger
// than maxOutput bytes, or were cut on their way in (a cut item is no
// longer valid data).
func passItems(items []mcp.Content, maxOutput int64) json.RawMessage {
	if len(items) > maxItems {
		return nil
	}
	b, err := json.Marshal(items)
	if err != nil || int64(len(b)) > maxOutput || cutMarkerRE.Match(b) {
		return nil
	}
	return b
}

// Close stops the server (a stdio server's stdin is closed; after 2s it is
// terminated) and refuses further calls.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	cs := s.cs
	s.cs = nil
	s.mu.Unlock()
	if cs == nil {
		return nil
	}
	return cs.Close()
}

// The SDK tells the server of a cancelled call (notifications/cancelled)
// on another goroutine, after the call has returned: when agenthost stops
// the server right after (it exits on Ctrl-C), the notification can be
// lost. A cancelNote, in the call's context, learns when it was written,
// and Call waits for that, a little, before it returns.
//
// The note also carries, over HTTP, the error of a response to the call
// that was too big (see Server.cut).
type cancelNote struct {
	call   context.Context // the call's context
	once   sync.Once
	done   chan struct{} // closed once the notification was written
	tooBig atomic.Pointer[error]
}

type cancelKey struct{}

func noteOf(ctx context.Context) *cancelNote {
	n, _ := ctx.Value(cancelKey{}).(*cancelNote)
	return n
}

func (n *cancelNote) sent() { n.once.Do(func() { close(n.done) }) }

// cancelNoteWait bounds the wait for the notification: a server that
// reads nothing must not hold up an abort.
const cancelNoteWait = 2 * time.Second

func (n *cancelNote) wait() {
	t := time.NewTimer(cancelNoteWait)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
	}
}

// noteTransport is a stdio transport whose connection tells the
// cancelNote of a call when its notifications/cancelled was written (the
// SDK passes the call's context values on to that write).
type noteTransport struct{ mcp.Transport }

func (t noteTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return noteConn{c}, nil
}

type noteConn struct{ mcp.Connection }

func (c noteConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if n := noteOf(ctx); n != nil && err == nil {
		if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "notifications/cancelled" {
			n.sent()
		}
	}
	return err
}
