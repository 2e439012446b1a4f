package loop

import (
	"context"
	"errors"
	"fmt"
)

// runKey is the context key of the run a tool call belongs to.
type runKey struct{}

// ErrNoRun is the error of Sample outside a tool call of a run.
var ErrNoRun = errors.New("not during a tool call of a run")

// SpendLimitError is a Sample request refused because it could take a run
// past its token or cost limit.
type SpendLimitError struct {
	Reason StopReason
	Detail string
}

func (e *SpendLimitError) Error() string { return fmt.Sprintf("%s: %s", e.Reason, e.Detail) }

// Sample sends req to the model of the agent whose tool call ctx belongs
// to, outside the run's steps: a tool's own request for a completion (an
// MCP server's sampling). Its usage and cost are charged to the run and the
// runs above it, as a step's are; a request that could take one of them
// past its token or cost limit is refused without being sent
// (*SpendLimitError). The requests of one run's tools are sent one at a
// time. It returns the response and the model's ID; ErrNoRun when ctx is
// not a tool call's.
func Sample(ctx context.Context, req Request) (Response, string, error) {
	ru, _ := ctx.Value(runKey{}).(*run)
	if ru == nil {
		return Response{}, "", ErrNoRun
	}
	root := ru
	for root.parent != nil {
		root = root.parent
	}
	root.sampleMu.Lock()
	defer root.sampleMu.Unlock()
	if reason, why := ru.overLimit(EstimateUsage(req, Response{}).PromptTokens, "this request"); reason != "" {
		return Response{}, "", &SpendLimitError{reason, why}
	}
	resp, err := ru.a.Model.Stream(ctx, req, nil)
	if err != nil {
		return Response{}, "", err
	}
	u, _ := ru.account(req, &resp)
	ru.log.Info().Int("prompt_tokens", u.PromptTokens).Int("completion_tokens", u.CompletionTokens).Msg("sampling request for a tool")
	return resp, ru.a.ModelID, nil
}
