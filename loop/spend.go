package loop

import (
	"fmt"
	"math"
)

// Price is what a model costs, in USD per million tokens. CachedInput
// prices the prompt tokens a provider served from its cache; the host sets
// it to Input when the config leaves it out.
type Price struct {
	Input       float64
	Output      float64
	CachedInput float64
}

// Cost is the cost in USD of usage u at price p.
func (p Price) Cost(u Usage) float64 {
	cached := min(max(u.CachedTokens, 0), u.PromptTokens)
	return (float64(u.PromptTokens-cached)*p.Input + float64(cached)*p.CachedInput +
		float64(u.CompletionTokens)*p.Output) / 1e6
}

// bytesPerToken is the estimate used when a server reports no usage: one
// token per four bytes of what was sent and received, rounded up.
const bytesPerToken = 4

// EstimateUsage estimates the usage of a request a server reported none
// for: the bytes of the request's messages and tools, and of the response's
// text, reasoning and tool calls, over bytesPerToken. Estimated is set.
func EstimateUsage(req Request, resp Response) Usage {
	var in int
	for _, m := range req.Messages {
		in += messageBytes(m)
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	u := Usage{
		PromptTokens:     tokensOf(in),
		CompletionTokens: tokensOf(messageBytes(resp.Message)),
		Estimated:        true,
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func messageBytes(m Message) int {
	n := len(m.Role) + len(m.Content) + len(m.Reasoning) + len(m.Name)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}

func tokensOf(bytes int) int { return (bytes + bytesPerToken - 1) / bytesPerToken }

// spend is what a run has used so far: the tokens are Result.Usage; cost
// is in USD, and costKnown is false once a request was made by an agent
// without a price.
type spend struct {
	cost      float64
	costKnown bool
	// lastPrompt is the prompt size of the run's last step request, the
	// projection of the next one.
	lastPrompt int
}

// account completes the usage of a response (estimated when the server sent
// none), charges it to this run and every run above it, and returns the
// usage and the request's cost (nil without a price).
func (ru *run) account(req Request, resp *Response) (Usage, *float64) {
	if resp.Usage.Zero() {
		resp.Usage = EstimateUsage(req, *resp)
	}
	u := resp.Usage
	var cost *float64
	if ru.a.Price != nil {
		c := roundUSD(ru.a.Price.Cost(u))
		cost = &c
	}
	for r := ru; r != nil; r = r.parent {
		r.res.Usage = r.res.Usage.Add(u)
		if cost == nil {
			r.spent.costKnown = false
		} else {
			r.spent.cost += *cost
		}
		r.res.Cost = r.runCost()
	}
	return u, cost
}

// runCost is the run's cost so far; nil while unknown.
func (ru *run) runCost() *float64 {
	if !ru.spent.costKnown {
		return nil
	}
	c := roundUSD(ru.spent.cost)
	return &c
}

// roundUSD rounds a reported amount to 1e-10 USD, so that sums of float
// costs print without binary artefacts (0.00169, not 0.0016899999999999999).
func roundUSD(v float64) float64 { return math.Round(v*1e10) / 1e10 }

// limited says whether this run or a run above it has a token or cost limit.
func (ru *run) limited() bool {
	for r := ru; r != nil; r = r.parent {
		if r.a.Tokens > 0 || r.a.Cost > 0 {
			return true
		}
	}
	return false
}

// spendLimit says whether the next step request could pass the token or
// cost limit of this run or of a run above it (overLimit), its prompt
// projected as the last step's prompt (or, before the first step,
// estimated from the history). It returns the stop reason and a
// description for the log, or "".
func (ru *run) spendLimit(req Request) (StopReason, string) {
	next := ru.spent.lastPrompt
	if next == 0 {
		next = EstimateUsage(req, Response{}).PromptTokens
	}
	return ru.overLimit(next, "next request")
}

// overLimit is the one spend check: whether a request with a prompt of
// about next tokens, sent by this run, could pass the token or cost limit
// of this run or of a run above it (a subagent's requests count for its
// parents): the tokens so far plus next, or the cost so far plus next's
// at the agent's price, past the limit. It returns the stop reason and a
// description naming the request as what ("next request"), or "".
func (ru *run) overLimit(next int, what string) (StopReason, string) {
	var nextCost float64
	if ru.a.Price != nil {
		nextCost = ru.a.Price.Cost(Usage{PromptTokens: next})
	}
	for r := ru; r != nil; r = r.parent {
		if t := r.a.Tokens; t > 0 && r.res.Usage.TotalTokens+next > t {
			return StopTokenLimit, fmt.Sprintf("agent %s: %d tokens used, %s about %d, limit %d", r.a.Name, r.res.Usage.TotalTokens, what, next, t)
		}
		if c := r.a.Cost; c > 0 && r.spent.cost+nextCost > c {
			return StopCostLimit, fmt.Sprintf("agent %s: $%s used, %s about $%s, limit $%s", r.a.Name, USD(r.spent.cost), what, USD(nextCost), USD(c))
		}
	}
	return "", ""
}

// USD formats an amount of dollars with enough digits for small costs:
// four decimals below one dollar, two above.
func USD(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("%.4f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
