package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/clientmodel"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/loop"
)

// RunRequest is one run of an agent, as a front end asks for it.
type RunRequest struct {
	// Agent names the agent to run; "" runs the default one (the agent with
	// default = true, else the only one).
	Agent string
	// Prompt is the task.
	Prompt string
	// Session, when set, continues that session: its history is given to
	// the agent and the run's events are appended to it. "" starts a new
	// session.
	Session string
	// Sink receives every event of the run, each once the session holds
	// it (the session writes the events at the latest before the loop
	// next waits on a model, a tool, a retry or the user); nil discards
	// them.
	Sink loop.Sink
	// OnText receives the text of the agents' answers as it streams (see
	// loop.Runner.OnText); nil discards it.
	OnText func(agent string, depth int, text string)
	// Approver decides the calls of the agents' approve tools and doom-loop
	// "ask" questions; nil denies the former and makes the latter stop.
	// With Options.Replay the cassette's recorded decisions answer instead;
	// with Options.Record the decisions are recorded.
	Approver loop.Approver
	// Model, when set, is the model of this run's agent instead of its
	// own (RunModel: a model block's name or a model id of the agent's
	// provider); its subagents keep theirs.
	Model string
}

// UsageError is a run refused for what was asked: an agent that does not
// exist, no default agent, or a session that cannot be continued (not
// found, not a valid id, in use by another run, or another agent's), or a
// data_dir that is not private to the user (session.ErrNotPrivate), or
// an agent whose model needs an MCP client where there is none. Nothing
// ran and nothing was appended to a session. Err is the cause: an
// *UnknownAgentError, a *SessionAgentError, session.ErrNotFound,
// session.ErrBusy (a *session.BusyError), session.ErrNotPrivate, a
// *NoClientError or another error saying what is wrong; errors.Is and
// errors.As see through to it.
type UsageError struct {
	// Session is RunRequest.Session when the error is about the session.
	Session string
	Err     error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// UnknownAgentError is RunRequest.Agent naming no agent of the config.
type UnknownAgentError struct {
	Name string
	// Agents are the names of the config's agents, sorted.
	Agents []string
}

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("no agent %q; agents: %s", e.Name, strings.Join(e.Agents, ", "))
}

// SessionAgentError is a session continued with another agent than the
// one that started it.
type SessionAgentError struct {
	Session string
	// Agent is the session's agent; Asked the agent the request selected.
	Agent, Asked string
}

func (e *SessionAgentError) Error() string {
	return fmt.Sprintf("session %s belongs to agent %q, not %q", e.Session, e.Agent, e.Asked)
}

// Run runs one agent the way every front end does: it selects the agent,
// creates a session or continues one (holding its lock for the whole run
// and reading its history under the lock, so no other run appends in
// between), runs the loop with every event recorded in the session before
// it reaches req.Sink, and closes the session. The result names the session
// (run.end carries it too); a failure to write the session is listed in
// Result.Errors (the run itself went on).
//
// A request that cannot run returns a *UsageError and no result; a failure
// to create or read the session returns another error. Once the loop has
// run, the error is nil and Result.StopReason says how the run ended.
func (h *Host) Run(ctx context.Context, req RunRequest) (*loop.Result, error) {
	agent, err := h.selectAgent(req.Agent)
	if err != nil {
		return nil, err
	}
	need := h.ClientNeeds(agent.Name)
	var model *config.Model // the top agent's, when the run picks it
	if req.Model != "" {
		agent, model = h.withModel(agent, req.Model)
		need = h.clientNeeds(agent.Name, model)
	}
	if h.player == nil && clientmodel.ClientFrom(ctx) == nil {
		// A replayed run answers from its cassette: it needs no client.
		if need.Sampling {
			return nil, &UsageError{Err: &NoClientError{need}}
		}
	}
	sess, history, err := OpenSession(h.Config, agent.Name, req.Session)
	if err != nil {
		return nil, err
	}
	sink := &runSink{sess: sess, user: req.Sink}
	if tr := h.runTracer(ctx, sess.ID, history); tr != nil {
		if model != nil {
			tr.SetAgent(agent.Name, h.traceAgent(h.Config.Agent(agent.Name), model, agent.ModelID))
		}
		sink.tracer = tr
	}
	r := &loop.Runner{
		Sink:     sink,
		OnText:   req.OnText,
		Approver: h.approver(req.Approver),
		// The calls of every run of this host share its slots, so a
		// process serving many runs holds at most max_parallel_tools
		// plugin instances for them.
		Slots: h.slots,
	}
	// Plugins loaded from their cached load facts compile now, while the
	// first model request is made (plugin.Runtime.CompileLoaded).
	h.runtime.CompileLoaded()
	// Instances of reuse plugins live as long as the run, never longer.
	scope := plugin.NewScope()
	res := r.Run(plugin.WithScope(ctx, scope), agent, loop.Input{Prompt: req.Prompt, History: history, Session: sess.ID})
	scope.Close()
	if err := sess.Close(); err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Msg("session not fully written")
		res.Errors = append(res.Errors, err.Error())
	}
	return res, nil
}

// selectAgent returns the agent named name, or the default agent when name
// is "".
func (h *Host) selectAgent(name string) (*loop.Agent, error) {
	name, err := ResolveAgent(h.Config, name)
	if err != nil {
		return nil, err
	}
	return h.agents[name], nil
}

// ResolveAgent is the name of cfg's agent that a run asking for name runs:
// name itself, or the default agent when name is "". An agent that does
// not exist, or no default agent, is a *UsageError (the former with an
// *UnknownAgentError). Every front end selects its agent here, those that
// run the loop elsewhere (run --temporal) too.
func ResolveAgent(cfg *config.Config, name string) (string, error) {
	if name == "" {
		ca, err := cfg.DefaultAgent()
		if err != nil {
			return "", &UsageError{Err: err}
		}
		return ca.Name, nil
	}
	if cfg.Agent(name) != nil {
		return name, nil
	}
	names := make([]string, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return "", &UsageError{Err: &UnknownAgentError{Name: name, Agents: names}}
}

// OpenSession creates a session of cfg's data_dir for agent, or opens
// session id to continue it and reads its history, as every run does
// (Host.Run, and run --temporal, whose loop runs on a worker). The session
// is returned open: its lock is held, so a second run of it is refused and
// no other run appends between reading the history and this run's first
// event. On error nothing is left open. A session that cannot be continued
// (not found, busy, another agent's) or a data_dir that is not private is
// a *UsageError; a failure to create or read the session another error.
func OpenSession(cfg *config.Config, agent, id string) (*session.Session, []loop.Message, error) {
	dataDir := cfg.Host.DataDir
	if id == "" {
		sess, err := session.Create(dataDir, session.Meta{Agent: agent, Config: cfg.File})
		if errors.Is(err, session.ErrNotPrivate) {
			return nil, nil, &UsageError{Err: err}
		}
		return sess, nil, err
	}
	sess, err := session.Open(dataDir, id)
	if errors.Is(err, session.ErrNotPrivate) {
		return nil, nil, &UsageError{Err: err}
	}
	if err != nil {
		return nil, nil, &UsageError{Session: id, Err: err}
	}
	if sess.Agent != agent {
		sess.Close()
		return nil, nil, &UsageError{Session: id, Err: &SessionAgentError{Session: id, Agent: sess.Agent, Asked: agent}}
	}
	_, evs, err := session.Events(dataDir, id)
	if err != nil {
		sess.Close()
		return nil, nil, fmt.Errorf("session %s: reading its history: %w", id, err)
	}
	return sess, session.History(evs), nil
}

// runSink records a run's events in its session, then hands them to the
// tracer and the caller's sink. The session holds them until the loop
// waits (loop.Flusher): one write for the events between two waits.
type runSink struct {
	sess   *session.Session
	tracer loop.Sink
	user   loop.Sink
}

func (s *runSink) Emit(ev loop.Event) {
	s.sess.Record(ev)
	if s.tracer != nil {
		s.tracer.Emit(ev)
	}
	if s.user != nil {
		s.user.Emit(ev)
	}
}

func (s *runSink) Flush() { s.sess.Flush() }

// approver is the Approver of a run: the cassette's recorded decisions on
// a replay (nobody is asked), inner with each decision recorded when
// recording, else inner.
func (h *Host) approver(inner loop.Approver) loop.Approver {
	switch {
	case h.player != nil:
		return h.player.Approver()
	case h.recorder != nil:
		return h.recorder.WrapApprover(inner)
	}
	return inner
}
