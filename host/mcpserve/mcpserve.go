// Package mcpserve offers a host's plugin tools and agents to MCP clients
// (`agenthost mcp serve`), with the official Go SDK of the Model Context
// Protocol. It builds the *mcp.Server; the command line picks the
// transport (stdio or streamable HTTP).
//
// A plugin tool served here runs in the same sandbox, with the same grants
// and limits, as when an agent calls it: a fresh instance per call, so
// concurrent calls are served concurrently. An agent served here runs with
// host.Run, like `agenthost run`: its full loop and limits, and a session
// recorded in data_dir.
package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/loop"
)

// Options say what to serve.
type Options struct {
	// Agent, when set, narrows what is served to this agent: its tools
	// (Tools) and itself (Agents). "" serves every plugin tool and every
	// agent.
	Agent string
	// Tools serves plugin tools; Agents serves agents as tools taking
	// {"prompt": string}. At least one must be set.
	Tools, Agents bool
	// Version is agenthost's version, told to clients.
	Version string
}

// agentInput is the input schema of a served agent.
var agentInput = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The task for the agent."}},"required":["prompt"],"additionalProperties":false}`)

// agentOutput is the schema of a served agent's structured content.
var agentOutput = json.RawMessage(`{"type":"object","properties":{` +
	`"agent":{"type":"string"},"session":{"type":"string"},"stop_reason":{"type":"string"},` +
	`"steps":{"type":"integer"},"steps_max":{"type":"integer"},"tool_calls":{"type":"integer"},` +
	`"output":{"type":"string"},"errors":{"type":"array","items":{"type":"string"}}},` +
	`"required":["agent","stop_reason","steps","steps_max","tool_calls","output"]}`)

// MetaRun is the _meta key of a served agent's result that holds its
// AgentResult when the agent has an output schema (its structured content
// is then the agent's answer).
const MetaRun = "agenthost/run"

// AgentResult is the structured content of a served agent's result, or
// its _meta[MetaRun] when the agent has an output schema.
type AgentResult struct {
	Agent      string          `json:"agent"`
	Session    string          `json:"session,omitempty"`
	StopReason loop.StopReason `json:"stop_reason"`
	Steps      int             `json:"steps"`
	StepsMax   int             `json:"steps_max"`
	ToolCalls  int             `json:"tool_calls"`
	Output     string          `json:"output"`
	Errors     []string        `json:"errors,omitempty"`
}

// Server is the MCP server of a host.
type Server struct {
	*mcp.Server
	base  context.Context // ends when the command stops serving
	calls sync.WaitGroup  // calls being served

	mu sync.Mutex
	// inflight holds the cancel functions of the calls being served, by
	// the MCP session that made them.
	inflight map[*mcp.ServerSession]map[*call]struct{}
	// waiting are the agent runs waiting for a client's answer, by the
	// request state handed to the client (agentrun.go).
	waiting map[string]*waiting

	// plugins and offers are the plugins served with --tools and what
	// they offer besides tools (plugins.go).
	plugins []*plugin.Plugin
	offers  *offers
	// tools keeps the served tools in step with the host's (tools.go);
	// nil without --tools.
	tools *servedTools
}

type call struct{ cancel context.CancelFunc }

// Wait waits for the calls being served to end. A client that goes away
// cancels its calls; the front end waits for them before it closes the
// host, so that an aborted run's session is written to its end.
func (s *Server) Wait() { s.calls.Wait() }

// CancelSession cancels the calls being served to the MCP session id, as
// its client's notifications/cancelled would. The HTTP front end calls it
// when a client ends its session (DELETE): the SDK closes a session only
// once its calls have ended, and a served agent may run for minutes.
func (s *Server) CancelSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss, calls := range s.inflight {
		if ss.ID() != id {
			continue
		}
		for c := range calls {
			c.cancel()
		}
	}
}

// track makes h count as a call being served while it runs. Its context
// ends with the client's cancellation, with the end of its session
// (CancelSession) and when the command stops serving (s.base): the SDK
// ends a call's context on the client's cancellation only.
func (s *Server) track(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel, end := s.serving(ctx)
		defer end()
		defer s.register(req.Session, cancel)()
		return h(ctx, req)
	}
}

// serving counts work being served (Wait) until end is called, and gives
// it a context of ctx that also ends when the command stops serving
// (s.base); cancel ends it sooner.
func (s *Server) serving(ctx context.Context) (_ context.Context, cancel context.CancelFunc, end func()) {
	s.calls.Add(1)
	ctx, cancel = context.WithCancel(ctx)
	stop := context.AfterFunc(s.base, cancel)
	return ctx, cancel, func() {
		stop()
		cancel()
		s.calls.Done()
	}
}

// register adds cancel to what CancelSession cancels for session ss, until
// the returned function is called.
func (s *Server) register(ss *mcp.ServerSession, cancel context.CancelFunc) func() {
	c := &call{cancel: cancel}
	s.mu.Lock()
	if s.inflight[ss] == nil {
		s.inflight[ss] = map[*call]struct{}{}
	}
	s.inflight[ss][c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.inflight[ss], c)
		if len(s.inflight[ss]) == 0 {
			delete(s.inflight, ss)
		}
		s.mu.Unlock()
	}
}

// New builds the MCP server for h. It fails when nothing would be served,
// when opts.Agent names no agent, or when an agent and a tool would be
// served under the same name.
func New(ctx context.Context, h *host.Host, opts Options) (*Server, error) {
	if !opts.Tools && !opts.Agents {
		return nil, errors.New("nothing to serve: pass --tools, --agents or both")
	}
	log := zerolog.Ctx(ctx)
	var agents []string
	if opts.Agent != "" {
		a := h.Config.Agent(opts.Agent)
		if a == nil {
			var names []string
			for _, a := range h.Config.Agents {
				names = append(names, a.Name)
			}
			return nil, fmt.Errorf("no agent %q; agents: %s", opts.Agent, strings.Join(names, ", "))
		}
		agents = []string{a.Name}
	} else {
		for _, a := range h.Config.Agents {
			agents = append(agents, a.Name)
		}
	}

	srv := &Server{base: ctx, inflight: map[*mcp.ServerSession]map[*call]struct{}{}, waiting: map[string]*waiting{}}
	sopts := &mcp.ServerOptions{
		Logger: nil, // the SDK logs nothing; ours go to stderr or --log-file
	}
	o := newOffers()
	if opts.Tools {
		srv.plugins, srv.offers = h.Plugins, o
	}
	if opts.Tools {
		for _, p := range h.Plugins {
			if p.Offers("complete") {
				sopts.CompletionHandler = srv.complete(o)
			}
			if p.Offers("list_resources") && p.Offers("read_resource") {
				// Only served URIs may be subscribed to, which bounds
				// them; the SDK keeps the subscriptions, and a plugin's
				// notify_resource_updated reaches the subscribers
				// (pluginNews).
				sopts.SubscribeHandler = func(_ context.Context, req *mcp.SubscribeRequest) error {
					if o.resource(req.Params.URI) == nil {
						return fmt.Errorf("no resource %q", req.Params.URI)
					}
					return nil
				}
				sopts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
			}
		}
	}
	srv.Server = mcp.NewServer(&mcp.Implementation{Name: "agenthost", Version: opts.Version}, sopts)
	if opts.Tools {
		srv.addPluginOffers(ctx, h.Plugins, o)
	}
	served := map[string]string{} // name → what serves it, for collisions
	if opts.Tools {
		st := &servedTools{h: h, srv: srv, log: *log, agents: map[string]bool{}}
		srv.tools = st
		if opts.Agent != "" {
			st.want = map[string]bool{}
			for _, t := range h.Config.Agent(opts.Agent).Tools {
				st.want[t] = true
			}
		}
		st.sync()
		for name, t := range st.served {
			served[name] = fmt.Sprintf("the tool of plugin %q", t.Plugin)
		}
		if opts.Agents {
			for _, name := range agents {
				st.agents[name] = true
			}
		}
		// A change found outside a served call (a used MCP server's
		// notification, an agent's step) is served on a goroutine of its
		// own: the refresh that found it does not wait on clients.
		h.OnToolsChanged(func() { go st.sync() })
	}
	if opts.Agents {
		for _, name := range agents {
			if prev, dup := served[name]; dup {
				return nil, fmt.Errorf("agent %q and %s have the same name; serve them separately (--tools or --agents) or rename one", name, prev)
			}
			served[name] = fmt.Sprintf("agent %q", name)
			la := h.Agent(name)
			var out any = agentOutput
			if len(la.OutputSchema) > 0 {
				out = la.OutputSchema // structuredContent is the agent's answer
			}
			srv.AddTool(&mcp.Tool{Name: name, Description: la.Description, InputSchema: agentInput, OutputSchema: out}, srv.track(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return srv.runAgent(ctx, h, name, req), nil
			}))
		}
	}
	if len(served) == 0 {
		return nil, errors.New("nothing to serve: the selected agent has no tools and --agents was not given")
	}
	return srv, nil
}

// objectSchema reports whether schema is a JSON object with "type": "object".
func objectSchema(schema json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Type == "object"
}

// serveTool serves a call of tool name. The tool may ask the client
// questions (a used MCP server's elicitation, a plugin's) through the
// call's loop.CallClient: a client of protocol 2026-07-28 or later that
// declared elicitation is asked with input-required results, so the tool
// call is started as a servedRun that outlives the request (a call with a
// request state answers one of its questions); other clients are asked
// during the call, or not at all (callClient).
func (s *Server) serveTool(ctx context.Context, h *host.Host, name string, req *mcp.CallToolRequest, id string, structured bool) *mcp.CallToolResult {
	if req.Params != nil && req.Params.RequestState != "" {
		return s.resume(ctx, name, req)
	}
	var token any
	if req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	if !asksByResult(req.Session) {
		defer s.afterCall(ctx)
		return callTool(withClient(ctx, req.Session, token), h, name, req, id, structured)
	}
	return s.start(ctx, fmt.Sprintf("tool %q", name), name, req, func(rctx context.Context, r *servedRun) *mcp.CallToolResult {
		defer s.afterCall(rctx)
		return callTool(loop.WithCallClient(rctx, runClient{run: r, tool: true, token: token}), h, name, req, id, structured)
	})
}

// afterCall serves what a tool call changed once it ended: the tools,
// resources and prompts a plugin or a used MCP server said changed, the
// resources it said were updated (plugins.go, tools.go). A changed list is
// served before the call's result goes out, so that a client listing the
// tools on that result sees the new ones.
func (s *Server) afterCall(ctx context.Context) {
	if s.tools != nil {
		s.tools.h.RefreshTools(ctx)
		s.tools.sync()
	}
	s.pluginNews(ctx)
}

// asksByResult reports whether the client of ss is asked questions with
// input-required results: it declared elicitation or sampling, and its
// protocol version forbids requests of the server during a call.
func asksByResult(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && (ip.Capabilities.Elicitation != nil || ip.Capabilities.Sampling != nil) && ip.ProtocolVersion >= mrtrVersion
}

// callTool runs one tool call (ctx carries the client) and maps its
// outcome: a result, an error result (IsError), or a broken plugin as an
// error result naming what went wrong. A panic in the call is an error result too: the server
// goes on. The result's structured content is passed on when the tool
// declares an output schema (structured).
func callTool(ctx context.Context, h *host.Host, name string, req *mcp.CallToolRequest, id string, structured bool) (out *mcp.CallToolResult) {
	defer func() {
		if v := recover(); v != nil {
			zerolog.Ctx(ctx).Error().Str("tool", name).Interface("panic", v).Msg("tool call panicked")
			out = errResult(fmt.Sprintf("tool %q failed: internal error: %v", name, v))
		}
	}()
	args := ""
	if req.Params != nil {
		args = string(req.Params.Arguments)
	}
	res, err := h.CallTool(ctx, name, args, id)
	if err != nil {
		// The text an agent's model would read for the same failure.
		return errResult("plugin failure: " + err.Error())
	}
	out = &mcp.CallToolResult{Content: contentOf(res), IsError: res.IsError}
	if structured && res.Structured != nil {
		out.StructuredContent = res.Structured
	}
	return out
}

// contentOf is a tool result's MCP content: the items the tool gave when
// it gave any but text (and they are valid MCP content), else its text.
func contentOf(res loop.ToolResult) []mcp.Content {
	if res.MCP != nil {
		var cr mcp.CallToolResult
		if err := json.Unmarshal(append(append([]byte(`{"content":`), res.MCP...), '}'), &cr); err == nil && len(cr.Content) > 0 {
			return cr.Content
		}
	}
	return []mcp.Content{&mcp.TextContent{Text: res.Content}}
}

// limitOrDone reports whether a run ended with an answer: completed, or
// stopped by a limit after its final summary (loop's stops table). Other
// ends (provider error, error, aborted, invalid output) are error results.
func limitOrDone(r loop.StopReason) bool { return r.EndsWithAnswer() }

func errResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
