package cassette

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// A cassette also holds the decisions of the calls that waited for a
// person (loop.Approver), one line each, in the order they were made:
//
//	{"decision": {"agent", "kind", "tool", "arguments", "verdict", "reason", "by"}}
//
// The request after a decision holds its outcome (the call's result, or
// the refusal with the person's reason), so a replay must decide the same
// way to find it: Player.Approver answers from these lines, without asking
// anyone. A question is matched by its agent, kind, tool and canonical
// arguments, and gets the recorded decisions for it in order (By
// loop.ByReplay, or loop.ByNone for a refusal nobody was asked about); one the
// cassette does not hold is denied (By loop.ByReplay), and the next
// request then misses with the usual explanation.

// Decision is one recorded decision.
type Decision struct {
	Agent     string            `json:"agent"`
	Kind      loop.QuestionKind `json:"kind"`
	Tool      string            `json:"tool"`
	Arguments json.RawMessage   `json:"arguments"`
	Verdict   loop.Verdict      `json:"verdict"`
	Reason    string            `json:"reason,omitempty"`
	By        string            `json:"by"`
}

// decisionKey is what a replayed question is matched by.
func decisionKey(agent string, kind loop.QuestionKind, tool string, args json.RawMessage) string {
	return agent + "\x00" + string(kind) + "\x00" + tool + "\x00" + string(args)
}

// decisionArgs are a call's arguments as a cassette holds them: canonical
// JSON, or the text as a JSON string.
func decisionArgs(args string) json.RawMessage {
	return canonicalJSON(json.RawMessage(args))
}

// WrapApprover returns an Approver that asks inner and records each
// decision in the cassette. A decision that cannot be written is still
// returned: the run goes on, and the recording's error surfaces with the
// next model request.
func (r *Recorder) WrapApprover(inner loop.Approver) loop.Approver {
	return loop.ApproverFunc(func(ctx context.Context, q loop.Question) loop.Decision {
		d := loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: "no one can be asked in this run"}
		if inner != nil {
			d = inner.Decide(ctx, q)
		}
		if ctx.Err() != nil {
			return d // aborted: the call does not run whatever the answer
		}
		b, err := json.Marshal(struct {
			Decision Decision `json:"decision"`
		}{Decision{Agent: q.Agent, Kind: q.Kind, Tool: q.Call.Name, Arguments: decisionArgs(q.Call.Arguments), Verdict: d.Verdict, Reason: d.Reason, By: d.By}})
		if err == nil {
			r.appendLine(b)
		}
		return d
	})
}

// decisions are a player's recorded decisions by key, and how many of each
// were served.
type decisions struct {
	mu     sync.Mutex
	byKey  map[string][]Decision
	served map[string]int
}

// Approver returns the Approver of a replay: it answers each question with
// the decision recorded for it (see above), By loop.ByReplay.
func (p *Player) Approver() loop.Approver {
	return loop.ApproverFunc(func(ctx context.Context, q loop.Question) loop.Decision {
		key := decisionKey(q.Agent, q.Kind, q.Call.Name, decisionArgs(q.Call.Arguments))
		p.decisions.mu.Lock()
		defer p.decisions.mu.Unlock()
		recorded := p.decisions.byKey[key]
		n := p.decisions.served[key]
		if n >= len(recorded) {
			return loop.Decision{Verdict: loop.Deny, By: loop.ByReplay, Reason: "the cassette " + p.path + " holds no decision for this call"}
		}
		p.decisions.served[key] = n + 1
		d := recorded[n]
		by := loop.ByReplay
		if d.By == loop.ByNone {
			by = loop.ByNone // nobody was asked then, nor now: the same refusal
		}
		return loop.Decision{Verdict: d.Verdict, Reason: d.Reason, By: by}
	})
}

// Decisions is the number of decisions in the cassette.
func (p *Player) Decisions() int {
	n := 0
	for _, ds := range p.decisions.byKey {
		n += len(ds)
	}
	return n
}
