package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
// (elicitApprover), and, when its model has provider = "mcp_client", for
// each model request (sampling.go). Clients of protocol versions before
// 2026-07-28 are asked with a server-initiated request (elicitation/create,
// sampling/createMessage) during the call. Later versions forbid that
// (SEP-2322): the call then ends with an input-required result carrying
// the request and a request state, the run waiting meanwhile, and the
// client calls again with the answer and the state; that call picks the
// run up where it waits. A client that does not come back within
// ElicitTimeout has left: the run is aborted.

// mrtrVersion is the first protocol version with multi round-trip requests.
const mrtrVersion = "2026-07-28"

// The keys of the one input request of an input-required result: an
// approval (elicitation) or a model request (sampling).
const (
	inputKey  = "approval"
	sampleKey = "sample"
)

// agentRun is a served agent's run, which may outlive the call that
// started it (between round trips).
type agentRun struct {
	name    string
	cancel  context.CancelFunc
	done    chan struct{} // closed once res is set
	res     *mcp.CallToolResult
	session *mcp.ServerSession
	// questions carries the run's requests to the client to the call
	// serving it.
	questions chan question

	mu     sync.Mutex
	req    *mcp.CallToolRequest // the call serving the run now; nil between calls
	reqCtx context.Context      // the context of req
}

// question is one request of a run to the client, made as the input
// request key of a result, and where its answer goes.
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
func (r *agentRun) ask(ctx context.Context, key string, req mcp.InputRequest) (mcp.InputResponse, error) {
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

// waiting is a run waiting for the answer to q, until timer fires.
type waiting struct {
	run   *agentRun
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
	// The run's context ends when the command stops serving, on
	// CancelSession, when the serving call is cancelled (attach), or when
	// the client does not come back with an answer.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.base, cancel)
	r := &agentRun{name: name, cancel: cancel, done: make(chan struct{}), session: req.Session, questions: make(chan question), req: req}
	run := host.RunRequest{Agent: name, Prompt: prompt, Sink: loop.SinkFunc(r.progress)}
	if req.Session != nil {
		run.Approver = elicitApprover{run: r}
		if need.Sampling {
			rctx = clientmodel.WithClient(rctx, runClient{run: r})
		}
	}
	unregister := s.register(req.Session, cancel)
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer unregister()
		defer stop()
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				zerolog.Ctx(ctx).Error().Str("agent", name).Interface("panic", v).Msg("agent run panicked")
				r.res = errResult(fmt.Sprintf("agent %q failed: internal error: %v", name, v))
			}
			close(r.done)
		}()
		res, err := h.Run(rctx, run)
		r.res = agentResult(rctx, h, name, res, err)
	}()
	return s.attach(ctx, r, req)
}

// attach serves run r to the call req until the run ends (its result), asks
// a question (an input-required result), or the call is cancelled (the run
// is aborted, and its result returned).
func (s *Server) attach(ctx context.Context, r *agentRun, req *mcp.CallToolRequest) *mcp.CallToolResult {
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
				q.reply <- answer{err: fmt.Errorf("the MCP client did not answer within %s", ElicitTimeout)}
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
func (r *agentRun) progress(ev loop.Event) {
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
	if h.Agent(name).Output != nil {
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
