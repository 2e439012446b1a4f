package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/clientmodel"
	"github.com/agenthost/agenthost/loop"
)

// A served agent's run asks the client about the calls that need approval
// (elicitApprover), passes on the questions of what it uses (runClient),
// and, when its model has provider = "mcp_client", sends it each model
// request (sampling.go). Clients of protocol versions before 2026-07-28 are
// asked with a server-initiated request (elicitation/create,
// sampling/createMessage) during the call. Later versions forbid that
// (SEP-2322): the call then ends with an input-required result carrying
// the request and a request state, the run waiting meanwhile, and the
// client calls again with the answer and the state; that call picks the
// run up where it waits. A client that does not come back within
// ElicitTimeout has left: the run is aborted.

// mrtrVersion is the first protocol version with multi round-trip requests.
const mrtrVersion = "2026-07-28"

// The keys of the one input request of an input-required result: a
// question (elicitation) or a model request (sampling).
const (
	inputKey  = "question"
	sampleKey = "sample"
)

// servedRun is a served agent's run, or a served tool call that may ask
// questions, which may outlive the call that started it (between round
// trips).
type servedRun struct {
	name    string
	cancel  context.CancelFunc
	done    chan struct{} // closed once res is set
	res     *mcp.CallToolResult
	session *mcp.ServerSession
	// questions carries the run's questions to the call serving it.
	questions chan question

	mu     sync.Mutex
	req    *mcp.CallToolRequest // the call serving the run now; nil between calls
	reqCtx context.Context      // the context of req
}

// question is one request of a run to the client (an elicitation: an
// approval or a used MCP server's question; or a model request), made as
// the input request key of a result, and where its answer goes.
type question struct {
	key   string
	req   mcp.InputRequest
	reply chan answer // buffered: one answer
}

// answer is the client's answer to a question (nil when its retried call
// carried none), or why there is none.
type answer struct {
	res mcp.InputResponse
	err error
}

// ask puts req to the client as the input request key of the result of
// the call serving the run (now, or the next one), and waits for the
// answer.
func (r *servedRun) ask(ctx context.Context, key string, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := question{key: key, req: req, reply: make(chan answer, 1)}
	select {
	case r.questions <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.reply:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoAnswer is the error of a question the client did not answer in time.
var errNoAnswer = fmt.Errorf("the MCP client did not answer within %s", ElicitTimeout)

// waiting is a run waiting for the answer to q, until timer fires.
type waiting struct {
	run   *servedRun
	q     question
	timer *time.Timer
}

// runAgent serves a call of agent name: a new run, or, with a request
// state, the answer to a question of a waiting run.
func (s *Server) runAgent(ctx context.Context, h *host.Host, name string, req *mcp.CallToolRequest) (out *mcp.CallToolResult) {
	defer func() {
		if v := recover(); v != nil {
			zerolog.Ctx(ctx).Error().Str("agent", name).Interface("panic", v).Msg("agent run panicked")
			out = errResult(fmt.Sprintf("agent %q failed: internal error: %v", name, v))
		}
	}()
	if req.Params != nil && req.Params.RequestState != "" {
		return s.resume(ctx, name, req)
	}
	var in struct {
		Prompt *string `json:"prompt"`
	}
	if req.Params == nil || json.Unmarshal(req.Params.Arguments, &in) != nil || in.Prompt == nil {
		return errResult(fmt.Sprintf(`agent %q takes {"prompt": string}`, name))
	}
	prompt := strings.TrimSpace(*in.Prompt)
	if prompt == "" {
		return errResult(fmt.Sprintf("agent %q: the prompt is empty", name))
	}
	need := h.ClientNeeds(name)
	if need.Sampling {
		if msg := samplingRefused(req.Session, need); msg != "" {
			return errResult(fmt.Sprintf("agent %q: %s", name, msg))
		}
	}
	return s.start(ctx, fmt.Sprintf("agent %q", name), name, req, func(rctx context.Context, r *servedRun) *mcp.CallToolResult {
		run := host.RunRequest{Agent: name, Prompt: prompt, Sink: loop.SinkFunc(r.progress)}
		if req.Session != nil {
			run.Approver = elicitApprover{run: r, change: h.FileChange}
			rctx = loop.WithCallClient(rctx, runClient{run: r})
		}
		if need.Sampling {
			rctx = clientmodel.WithClient(rctx, sampleClient{run: r})
		}
		res, err := h.Run(rctx, run)
		return agentResult(rctx, h, name, res, err)
	})
}

// start serves work (what: the run of an agent, or a tool call that may
// ask the client questions) to the call req of tool name: it runs on a context of
// its own, which ends when the command stops serving, on CancelSession,
// when the serving call is cancelled (attach), or when the client does
// not come back with an answer.
func (s *Server) start(ctx context.Context, what, name string, req *mcp.CallToolRequest, work func(rctx context.Context, r *servedRun) *mcp.CallToolResult) *mcp.CallToolResult {
	rctx, cancel, end := s.serving(context.WithoutCancel(ctx))
	r := &servedRun{name: name, cancel: cancel, done: make(chan struct{}), session: req.Session, questions: make(chan question), req: req, reqCtx: ctx}
	unregister := s.register(req.Session, cancel)
	go func() {
		defer end()
		defer unregister()
		defer func() {
			if v := recover(); v != nil {
				zerolog.Ctx(ctx).Error().Str("tool", name).Interface("panic", v).Msg("served call panicked")
				r.res = errResult(fmt.Sprintf("%s failed: internal error: %v", what, v))
			}
			close(r.done)
		}()
		r.res = work(rctx, r)
	}()
	return s.attach(ctx, r, req)
}

// attach serves run r to the call req until the run ends (its result), asks
// a question (an input-required result), or the call is cancelled (the run
// is aborted, and its result returned).
func (s *Server) attach(ctx context.Context, r *servedRun, req *mcp.CallToolRequest) *mcp.CallToolResult {
	r.mu.Lock()
	r.req, r.reqCtx = req, ctx
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.req, r.reqCtx = nil, nil
		r.mu.Unlock()
	}()
	select {
	case q := <-r.questions:
		token, err := newToken()
		if err != nil {
			q.reply <- answer{err: fmt.Errorf("no request state could be made: %w", err)}
			return s.attach(ctx, r, req)
		}
		w := &waiting{run: r, q: q}
		s.mu.Lock()
		s.waiting[token] = w
		s.mu.Unlock()
		w.timer = time.AfterFunc(ElicitTimeout, func() {
			if s.take(token) != nil {
				q.reply <- answer{err: errNoAnswer}
				r.cancel() // the client has left: nobody will read the result
			}
		})
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{q.key: q.req}, RequestState: token}
	case <-r.done:
		return r.res
	case <-ctx.Done():
		r.cancel()
		<-r.done
		return r.res
	}
}

// resume delivers the answer a call carries to the run waiting for it,
// then serves the run to that call.
func (s *Server) resume(ctx context.Context, name string, req *mcp.CallToolRequest) *mcp.CallToolResult {
	w := s.take(req.Params.RequestState)
	if w == nil || w.run.name != name {
		return errResult(fmt.Sprintf("agent %q: no run waits for this answer (it was answered already, or it waited more than %s)", name, ElicitTimeout))
	}
	w.timer.Stop()
	w.q.reply <- answer{res: req.Params.InputResponses[w.q.key]}
	return s.attach(ctx, w.run, req)
}

// elicit asks the client that called run r the question p: as an
// input-required result of the call serving the run (protocol 2026-07-28
// and later), else with an elicitation/create request, within
// ElicitTimeout. ctx is the run's (or one of its tool calls').
func (r *servedRun) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ip := r.session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil, notOffered("the MCP client does not offer elicitation")
	}
	res, err := r.request(ctx, inputKey, p, func(ectx context.Context) (mcp.InputResponse, error) {
		return r.session.Elicit(ectx, p)
	})
	if err != nil {
		return nil, err
	}
	if res, ok := res.(*mcp.ElicitResult); ok {
		return res, nil
	}
	return &mcp.ElicitResult{Action: "decline"}, nil // retried without an answer
}

// request puts req to the client that called run r: as the input request
// key of the result of the call serving the run (protocol 2026-07-28 and
// later), else by send during the call, within ElicitTimeout.
func (r *servedRun) request(ctx context.Context, key string, req mcp.InputRequest, send func(context.Context) (mcp.InputResponse, error)) (mcp.InputResponse, error) {
	if ip := r.session.InitializeParams(); ip != nil && ip.ProtocolVersion >= mrtrVersion {
		return r.ask(ctx, key, req)
	}
	sctx, cancel := context.WithTimeout(ctx, ElicitTimeout)
	defer cancel()
	res, err := send(sctx)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return nil, errNoAnswer
	}
	return res, err
}

// runClient is the loop.CallClient of a servedRun: the questions of what
// it uses (a used MCP server's elicitation, a plugin's) go to its client
// (servedRun.elicit), at any depth of sub-agents. A served agent's
// progress and log messages reach the client as its run's events
// (runlog.go); a tool call's (tool) go to the call serving it at the time
// (none between calls), with the progress token (token) of the call that
// started it. A plugin's sampling goes to the client too (CreateMessage).
type runClient struct {
	run   *servedRun
	tool  bool
	token any
}

func (c runClient) ProgressToken() any { return c.token }

func (c runClient) Progress(progress, total float64, message string) {
	req, ctx := c.serving()
	if req == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return
	}
	req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: progress, Total: total, Message: message})
}

func (c runClient) Log(level, logger string, data json.RawMessage) {
	req, ctx := c.serving()
	if req == nil {
		return
	}
	var d any = data
	if data == nil {
		d = nil
	}
	req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: logger, Data: d})
}

// serving is the call serving a tool call's run now, and its context; nil
// between calls and for an agent's run.
func (c runClient) serving() (*mcp.CallToolRequest, context.Context) {
	if !c.tool {
		return nil, nil
	}
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	if c.run.req == nil || c.run.req.Session == nil {
		return nil, nil
	}
	return c.run.req, c.run.reqCtx
}

// CreateMessage passes a sampling/createMessage (a plugin's create_message)
// to the run's client: as an input request of the call serving the run
// (protocol 2026-07-28 and later), else during the call, within
// ElicitTimeout, as a served agent's model requests are (sampling.go).
func (c runClient) CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if samplingCaps(c.run.session) == nil {
		return nil, notOffered("the MCP client does not offer sampling")
	}
	var p mcp.CreateMessageParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("not a sampling/createMessage request: %v", err)
	}
	res, err := c.run.request(ctx, sampleKey, &p, func(sctx context.Context) (mcp.InputResponse, error) {
		res, err := c.run.session.CreateMessage(sctx, &p)
		if err != nil {
			return nil, fmt.Errorf("the MCP client: %w", err)
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	switch res := res.(type) {
	case *mcp.CreateMessageResult:
		return json.Marshal(res)
	case *mcp.CreateMessageWithToolsResult:
		if len(res.Content) != 1 {
			return nil, fmt.Errorf("the MCP client answered the sampling request with %d content blocks, not one", len(res.Content))
		}
		// The shape of sampling/createMessage without tools: one block.
		return json.Marshal(&mcp.CreateMessageResult{Meta: res.Meta, Content: res.Content[0], Model: res.Model, Role: res.Role, StopReason: res.StopReason})
	}
	return nil, errors.New("the call was retried without an answer to the sampling request")
}

func (c runClient) Elicit(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.ElicitParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("not an elicitation/create request: %v", err)
	}
	res, err := c.run.elicit(ctx, &p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// take removes and returns the run waiting under token, or nil.
func (s *Server) take(token string) *waiting {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiting[token]
	delete(s.waiting, token)
	return w
}

// newToken is a request state: 128 random bits, which only the client
// that was handed it knows.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// progress sends each event to the call serving the run as a log message
// (runlog.go), and a progress notification per step of the agent itself
// when that call gave a progress token.
func (r *servedRun) progress(ev loop.Event) {
	r.log(ev)
	if ev.Type != loop.EventStepStart || ev.Depth != 0 {
		return
	}
	r.mu.Lock()
	req := r.req
	r.mu.Unlock()
	if req == nil || req.Params == nil || req.Session == nil {
		return
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return
	}
	ctx := context.Background()
	err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      float64(ev.Step),
		Total:         float64(ev.StepsMax),
		Message:       fmt.Sprintf("%s: step %d of at most %d", r.name, ev.Step, ev.StepsMax),
	})
	if err != nil {
		zerolog.Ctx(ctx).Debug().Err(err).Msg("progress notification not sent")
	}
}

// agentResult maps a served agent's run to its call's result.
func agentResult(ctx context.Context, h *host.Host, name string, res *loop.Result, err error) *mcp.CallToolResult {
	if err != nil {
		return errResult(fmt.Sprintf("agent %q: %v", name, err))
	}
	sc := AgentResult{
		Agent: res.Agent, Session: res.Session, StopReason: res.StopReason,
		Steps: res.Steps, StepsMax: res.StepsMax, ToolCalls: res.ToolCalls,
		Output: res.Output, Errors: res.Errors,
	}
	zerolog.Ctx(ctx).Info().Str("agent", name).Str("session", res.Session).Str("stop_reason", string(res.StopReason)).Int("steps", res.Steps).Msg("served agent run")
	if len(h.Agent(name).OutputSchema) > 0 {
		// The agent's own schema is the tool's output schema: its answer
		// is the structured content, and the run's summary goes in _meta.
		out := &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: res.Output}},
			IsError: len(res.OutputJSON) == 0 || !limitOrDone(res.StopReason),
		}
		out.Meta = mcp.Meta{MetaRun: sc}
		if !out.IsError {
			out.StructuredContent = res.OutputJSON
		}
		return out
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: res.Output}},
		StructuredContent: sc,
		IsError:           !limitOrDone(res.StopReason),
	}
}
