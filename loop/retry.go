package loop

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// stream sends req, retrying retryable provider errors per the agent's
// RetryPolicy. On failure it returns the stop reason and the error (nil
// error only for an abort without one). text says whether streamed text
// goes to Runner.OnText.
func (ru *run) stream(ctx context.Context, req Request, text bool) (Response, StopReason, error) {
	p := ru.a.Retry
	if p.Attempts <= 0 {
		p.Attempts = defaultAttempts
	}
	if p.Initial <= 0 {
		p.Initial = defaultInitial
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = defaultMaxDelay
	}
	var onText func(string)
	if text && ru.r.OnText != nil {
		onText = func(s string) { ru.r.OnText(ru.a.Name, ru.depth, s) }
	}
	for attempt := 1; ; attempt++ {
		resp, err := ru.a.Model.Stream(ctx, req, onText)
		if err == nil {
			return resp, "", nil
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return Response{}, StopAborted, err
		}
		var pe *ProviderError
		if !errors.As(err, &pe) {
			ru.log.Error().Err(err).Msg("model request failed")
			return Response{}, StopError, fmt.Errorf("model %s: %w", ru.a.ModelName, err)
		}
		if !pe.Retryable {
			ru.log.Error().Err(err).Int("status", pe.Status).Msg("model request failed (not retryable)")
			return Response{}, StopProviderError, err
		}
		if attempt >= p.Attempts {
			ru.log.Error().Err(err).Int("status", pe.Status).Int("attempts", attempt).Msg("model request failed: attempts exhausted")
			return Response{}, StopProviderError, fmt.Errorf("giving up after %d attempts: %w", attempt, err)
		}
		delay := ru.backoff(p, attempt)
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > p.MaxDelay {
				ru.log.Error().Err(err).Dur("retry_after", pe.RetryAfter).Dur("max_delay", p.MaxDelay).Msg("model request failed: server asks for too long a wait")
				return Response{}, StopProviderError, fmt.Errorf("server asked to wait %s before retrying, more than max_delay %s: %w", pe.RetryAfter, p.MaxDelay, err)
			}
			delay = pe.RetryAfter
		}
		ru.log.Warn().Err(err).Int("status", pe.Status).Int("attempt", attempt).Dur("delay", delay).Msg("model request failed: retrying")
		ru.emit(Event{Type: EventRetry, Step: ru.res.Steps, StepsMax: ru.cap, Attempt: attempt,
			DelayMS: Int64(delay.Milliseconds()), Status: pe.Status, Message: err.Error()})
		if err := ru.r.sleep(ctx, delay); err != nil {
			return Response{}, StopAborted, err
		}
	}
}

// backoff is the delay after the failed try number attempt (1-based):
// Initial·2^(attempt−1), scaled by a jitter factor in [0.8, 1.2), capped at
// MaxDelay.
func (ru *run) backoff(p RetryPolicy, attempt int) time.Duration {
	d := p.Initial
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	j := rand.Float64
	if ru.r.Jitter != nil {
		j = ru.r.Jitter
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*j()))
	return min(d, p.MaxDelay)
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// compactionKeep is the number of most recent messages compaction keeps
// verbatim (more when that would split a tool-call message from its results).
const compactionKeep = 4

// summaryPrefix starts the user message that replaces compacted history.
const summaryPrefix = "Summary of earlier conversation: "

// compaction replaces the older part of the history with a summary written
// by the model. It returns a stop reason only when the run was aborted; any
// other failure leaves the history as it was.
func (ru *run) compaction(ctx context.Context) StopReason {
	ru.compact = false
	start := 0
	if len(ru.history) > 0 && ru.history[0].Role == RoleSystem {
		start = 1
	}
	body := ru.history[start:]
	cut := len(body) - compactionKeep
	for cut > 0 && body[cut].Role == RoleTool {
		cut--
	}
	if cut < 2 {
		ru.log.Debug().Int("messages", len(body)).Msg("compaction skipped: too few older messages")
		return ""
	}
	msgs := make([]Message, 0, start+cut+1)
	msgs = append(msgs, ru.history[:start]...)
	msgs = append(msgs, body[:cut]...)
	msgs = append(msgs, Message{Role: RoleUser, Content: orDefault(ru.a.Prompts.Compaction, fallbackCompaction)})

	resp, failed, err := ru.stream(ctx, Request{Messages: msgs}, false)
	if failed == StopAborted {
		return StopAborted
	}
	if failed != "" {
		ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("compaction: %v", err))
		ru.log.Error().Err(err).Msg("compaction failed: history kept")
		return ""
	}
	ru.res.Usage = ru.res.Usage.Add(resp.Usage)
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		ru.log.Warn().Msg("compaction returned no summary: history kept")
		return ""
	}
	sm := Message{Role: RoleUser, Content: summaryPrefix + summary}
	h := make([]Message, 0, start+1+len(body)-cut)
	h = append(h, ru.history[:start]...)
	h = append(h, sm)
	h = append(h, body[cut:]...)
	ru.history = h
	ru.log.Info().Int("replaced", cut).Int("kept", len(body)-cut).Msg("history compacted")
	ru.emit(Event{Type: EventCompaction, Step: ru.res.Steps, StepsMax: ru.cap, Usage: &resp.Usage, Replaced: cut, Kept: len(body) - cut,
		Message: fmt.Sprintf("%d older messages replaced by a summary; %d recent messages kept", cut, len(body)-cut), Msg: &sm})
	return ""
}
