package loop

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// Approver decides the tool calls that wait for a person: the calls of
// tools an agent lists in Agent.Approve, and, under DoomAsk, the call that
// completes a doom loop. The loop asks it on its own goroutine, one
// question at a time, in call order, after the events so far are flushed;
// the call waits for the answer. Decide must return once ctx ends (the
// loop then answers the call as aborted, whatever the decision).
//
// Front ends implement it: a terminal asks the user, flags allow patterns,
// an MCP server asks its client, a durable workflow waits for a signal.
type Approver interface {
	Decide(ctx context.Context, q Question) Decision
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, q Question) Decision

func (f ApproverFunc) Decide(ctx context.Context, q Question) Decision { return f(ctx, q) }

// QuestionKind is what a Question asks.
type QuestionKind string

const (
	// AskApproval: may this call of a tool listed in Agent.Approve run?
	AskApproval QuestionKind = "approve"
	// AskDoomLoop: may this call, the Count-th identical one in a row, run?
	AskDoomLoop QuestionKind = "doom_loop"
)

// Question is one call waiting for a decision.
type Question struct {
	Kind QuestionKind
	// Agent is the name of the agent making the call; Depth its depth (0
	// for the top-level run, 1 for its subagents ...).
	Agent string
	Depth int
	Call  ToolCall
	// Pattern is the Agent.Approve pattern the tool's name matched
	// (AskApproval).
	Pattern string
	// Count is the number of identical calls in a row (AskDoomLoop).
	Count int
}

// Verdict is the answer to a Question.
type Verdict string

const (
	// Allow runs this call.
	Allow Verdict = "allow"
	// AllowAlways runs this call and every later call of the same tool in
	// this agent's run without asking (AskApproval); for AskDoomLoop it
	// runs the call and turns doom-loop detection off for the run.
	AllowAlways Verdict = "always"
	// Deny does not run the call: it gets an error result carrying
	// Decision.Reason, and the run goes on (AskApproval); for AskDoomLoop
	// the run stops, as DoomStop does.
	Deny Verdict = "deny"
)

// Who decided: Decision.By. Front ends may use other words.
const (
	ByTerminal  = "terminal"   // a person at the terminal
	ByFlag      = "flag"       // --approve or --yes
	ByMCPClient = "mcp_client" // the MCP client, through elicitation
	BySignal    = "signal"     // a signal to a durable run (runs approve / deny)
	ByReplay    = "replay"     // the decision recorded in a cassette
	ByNone      = "none"       // nobody could be asked: refused
)

// Decision answers a Question.
type Decision struct {
	Verdict Verdict
	// Reason is free text: from a person who denied, it is given to the
	// model; from an approver that could not ask anyone (By ByNone), it
	// says how approval can be granted.
	Reason string
	// By says who decided (By* constants).
	By string
}

// approvalPattern returns the first of a's Approve patterns that name
// matches, and whether one does. Patterns are path.Match patterns over the
// whole name ("write_file", "gh__*"); a malformed one matches nothing (the
// host refuses such a config).
func (a *Agent) approvalPattern(name string) (string, bool) {
	for _, p := range a.Approve {
		if ok, err := path.Match(p, name); err == nil && ok {
			return p, true
		}
	}
	return "", false
}

// ApprovePatternError says what is wrong with an Agent.Approve pattern, or
// returns nil: for front ends and the config to check --approve values and
// approve lists with the rule the loop applies.
func ApprovePatternError(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("empty pattern")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("pattern %q: %v (patterns use *, ? and [...], as in \"gh__*\")", p, err)
	}
	return nil
}

// MatchApprovePattern reports whether tool name matches pattern p, the
// rule Agent.Approve uses.
func MatchApprovePattern(p, name string) bool {
	ok, err := path.Match(p, name)
	return err == nil && ok
}

// ask puts q to Runner.Approver, with approval.request and
// approval.decision around it. Without an Approver nobody can answer: the
// call is denied (By ByNone).
func (ru *run) ask(ctx context.Context, q Question, why string) Decision {
	c := q.Call
	q.Agent, q.Depth = ru.a.Name, ru.depth
	ru.emit(Event{Type: EventApprovalRequest, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments, Message: why})
	ru.r.flush()
	d := Decision{Verdict: Deny, By: ByNone, Reason: "no one can be asked in this run"}
	if ru.r.Approver != nil {
		d = ru.r.Approver.Decide(ctx, q)
	}
	switch d.Verdict {
	case Allow, AllowAlways:
	default:
		d.Verdict = Deny
	}
	if d.By == "" {
		d.By = ByNone
	}
	ru.emit(Event{Type: EventApprovalDecision, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name,
		Decision: string(d.Verdict), By: d.By, Message: d.Reason})
	ru.log.Info().Str("tool", c.Name).Str("call_id", c.ID).Str("kind", string(q.Kind)).Str("decision", string(d.Verdict)).Str("by", d.By).Msg("approval")
	return d
}

// approve decides call c of a tool listed in Agent.Approve, once it passed
// every other check (approve.go's place in execute): it reports whether c
// may run and, when not, its error result. A tool allowed "always" in this
// run is not asked again. A denied call, like every refused call, emits no
// tool event and does not count toward the budget.
func (ru *run) approve(ctx context.Context, c ToolCall) (string, bool) {
	pattern, ok := ru.a.approvalPattern(c.Name)
	if !ok || ru.always[c.Name] {
		return "", true
	}
	d := ru.ask(ctx, Question{Kind: AskApproval, Call: c, Pattern: pattern}, fmt.Sprintf("needs approval (approve %q)", pattern))
	if ctx.Err() != nil {
		return abortedResult, false
	}
	switch d.Verdict {
	case AllowAlways:
		if ru.always == nil {
			ru.always = map[string]bool{}
		}
		ru.always[c.Name] = true
		return "", true
	case Allow:
		return "", true
	}
	return deniedResult(c, d), false
}

// deniedResult is the error result of call c denied by d.
func deniedResult(c ToolCall, d Decision) string {
	reason := strings.TrimSpace(d.Reason)
	if d.By == ByNone {
		s := fmt.Sprintf("tool call %s not executed: it needs a person's approval and none could be given", c.Name)
		if reason != "" {
			s += ": " + reason
		}
		return s + ". Do without it, or say in your answer what you would have done."
	}
	// The text does not name who denied it: a replay, which decides as
	// recorded, must send the requests the recording sent.
	s := fmt.Sprintf("tool call %s not executed: the user denied it", c.Name)
	if reason != "" {
		s += ". Reason: " + reason
	}
	return s + ". Take another way, or say in your answer what you needed it for."
}
