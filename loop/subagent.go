package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// subagentSchema is the input schema of every subagent tool.
var subagentSchema = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)

// offerSubagents registers one tool per subagent, after the plugin tools. A
// subagent whose name is taken by a plugin tool is not offered.
func (ru *run) offerSubagents() {
	for _, s := range ru.a.Subagents {
		if s == nil || ru.plugin[s.Name] {
			continue
		}
		ru.tools = append(ru.tools, ToolSpec{Name: s.Name, Description: s.Description, InputSchema: subagentSchema})
		ru.names = append(ru.names, s.Name)
		ru.subagents[s.Name] = s
	}
}

// admitSubagent checks a call of subagent sub: its arguments and the
// nesting depth.
func (ru *run) admitSubagent(c ToolCall, sub *Agent) (string, bool) {
	if _, err := subagentPrompt(c); err != "" {
		return fmt.Sprintf(`invalid arguments for subagent %s: want {"prompt": string}: %s`, c.Name, err), false
	}
	if limit := ru.a.maxDepth(); ru.depth+1 > limit {
		ru.log.Warn().Str("subagent", sub.Name).Int("max_depth", limit).Msg("subagent refused: too deep")
		return fmt.Sprintf("subagent nesting deeper than max_depth %d refused: %s was not run", limit, sub.Name), false
	}
	return "", true
}

// subagentPrompt is the prompt of a subagent call, or why there is none.
func subagentPrompt(c ToolCall) (string, string) {
	var args struct {
		Prompt *string `json:"prompt"`
	}
	d := json.NewDecoder(bytes.NewReader([]byte(c.Arguments)))
	if err := d.Decode(&args); err != nil {
		return "", err.Error()
	}
	if args.Prompt == nil {
		return "", "missing \"prompt\""
	}
	return *args.Prompt, ""
}

// callSubagent runs sub, for the admitted call c, as a nested loop and
// returns its result as the tool message content (see the package
// documentation for the format).
func (ru *run) callSubagent(ctx context.Context, c ToolCall, sub *Agent) (string, bool) {
	prompt, _ := subagentPrompt(c)
	ru.res.ToolCalls++
	ru.emit(Event{Type: EventSubagentStart, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: sub.Name, Arguments: c.Arguments})
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Msg("subagent start")
	start := ru.r.now()
	var child *Result
	if ru.r.Subagent != nil {
		child = ru.r.Subagent(ctx, SubagentRun{Agent: sub, Prompt: prompt, Depth: ru.depth + 1, Above: ru.ancestors()})
		ru.charge(child)
	} else {
		// The child's usage and cost are charged to this run as they
		// happen (run.account).
		child = ru.r.run(ctx, sub, Input{Prompt: prompt}, ru.depth+1, ru)
	}
	dur := ru.r.now().Sub(start)

	for _, e := range child.Errors {
		ru.res.Errors = append(ru.res.Errors, "subagent "+sub.Name+": "+e)
	}
	isErr := child.StopReason.Broken()
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Str("stop_reason", string(child.StopReason)).
		Int("steps", child.Steps).Dur("duration", dur).Msg("subagent end")
	ru.emit(Event{Type: EventSubagentEnd, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: sub.Name,
		IsError: Bool(isErr), DurationMS: Int64(dur.Milliseconds()), Result: child})
	return SubagentContent(child), isErr
}

// SubagentContent formats a subagent's result as the content of the tool
// message its parent receives: the subagent's output, a blank line, then one
// line holding the JSON object {"stop_reason", "steps", "steps_max"}. With no
// output the content is that line alone. The output of a subagent with an
// output schema that its answer satisfied is that JSON value, compact.
func SubagentContent(res *Result) string {
	meta, _ := json.Marshal(struct {
		StopReason StopReason `json:"stop_reason"`
		Steps      int        `json:"steps"`
		StepsMax   int        `json:"steps_max"`
	}{res.StopReason, res.Steps, res.StepsMax})
	out := strings.TrimRight(res.Output, "\n")
	if len(res.OutputJSON) > 0 {
		out = string(res.OutputJSON)
	}
	if out == "" {
		return string(meta)
	}
	return out + "\n\n" + string(meta)
}

// SubagentRun is a subagent call handed to Runner.Subagent.
type SubagentRun struct {
	Agent  *Agent
	Prompt string
	// Depth is the subagent's depth (its parent's plus one).
	Depth int
	// Above is the spend of the calling run and of every run above it,
	// nearest first: the subagent's requests count toward their limits.
	Above []Ancestor
}

// Ancestor is the spend and the limits of a run above a subagent, as the
// subagent's run needs them when it runs elsewhere: its requests are
// charged to these runs too, and a request that would take one of them past
// its limit makes the subagent's next step final.
type Ancestor struct {
	Agent     string  `json:"agent"`
	Tokens    int     `json:"tokens,omitempty"` // the run's token limit; 0 unlimited
	Cost      float64 `json:"cost,omitempty"`   // the run's cost limit in USD; 0 unlimited
	Used      Usage   `json:"used"`
	Spent     float64 `json:"spent"`
	CostKnown bool    `json:"cost_known"`
}

// ancestors returns the spend of ru and the runs above it, nearest first.
func (ru *run) ancestors() []Ancestor {
	var out []Ancestor
	for r := ru; r != nil; r = r.parent {
		out = append(out, Ancestor{Agent: r.a.Name, Tokens: r.a.Tokens, Cost: r.a.Cost,
			Used: r.res.Usage, Spent: r.spent.cost, CostKnown: r.spent.costKnown})
	}
	return out
}

// charge adds the usage and cost of a subagent run elsewhere to ru and the
// runs above it, as run.account would have done request by request. A
// child without cost made a request without a price (or none at all).
func (ru *run) charge(child *Result) {
	if child.Usage.Zero() && !child.Usage.Estimated {
		return
	}
	for r := ru; r != nil; r = r.parent {
		r.res.Usage = r.res.Usage.Add(child.Usage)
		if child.Cost == nil {
			r.spent.costKnown = false
		} else {
			r.spent.cost += *child.Cost
		}
		r.res.Cost = r.runCost()
	}
}

// RunSubagent runs a as the subagent call s describes, with the runs of
// s.Above standing in for its parents: it is the other half of
// Runner.Subagent, for the process (or workflow) that runs the subagent.
// The result's usage and cost are the subagent's own.
func (r *Runner) RunSubagent(ctx context.Context, s SubagentRun) *Result {
	var parent *run
	for i := len(s.Above) - 1; i >= 0; i-- {
		an := s.Above[i]
		parent = &run{
			r:      r,
			a:      &Agent{Name: an.Agent, Policy: Policy{Tokens: an.Tokens, Cost: an.Cost}},
			depth:  s.Depth - 1 - i,
			parent: parent,
			res:    &Result{Agent: an.Agent, Usage: an.Used},
			spent:  spend{cost: an.Spent, costKnown: an.CostKnown},
		}
	}
	return r.run(ctx, s.Agent, Input{Prompt: s.Prompt}, s.Depth, parent)
}
