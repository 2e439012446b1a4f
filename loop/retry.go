package loop

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
)

// RetryPolicy controls retries of failed model requests. A zero (or
// negative) field takes the default of the provider's retry block in
// agents.hcl (package internal/defaults).
type RetryPolicy struct {
	// Attempts is the total number of tries, the first included (default
	// defaults.RetryAttempts).
	Attempts int
	// Initial is the first backoff delay (default defaults.RetryInitial);
	// each retry doubles it.
	Initial time.Duration
	// MaxDelay caps one delay (default defaults.RetryMaxDelay). A server
	// asking for a longer wait stops the run with provider_error.
	MaxDelay time.Duration
}

// withDefaults returns p with zero (or negative) values replaced by the
// defaults.
func (p RetryPolicy) withDefaults() RetryPolicy {
	p.Attempts = defaults.Or(p.Attempts, defaults.RetryAttempts)
	p.Initial = defaults.Or(p.Initial, defaults.RetryInitial)
	p.MaxDelay = defaults.Or(p.MaxDelay, defaults.RetryMaxDelay)
	return p
}

// LogRequestFailed starts the message of every log record about a failed
// model request, a retry's warning included ("model request failed:
// retrying"). Each such failure is also an EventRetry or, when it stops
// the run or its compaction, in Result.Errors: a front end that shows
// those may leave the records out.
const LogRequestFailed = "model request failed"

// LogDoomLoop starts the message of every log record about a doom-loop
// verdict (each is also an EventDoomLoop), LogFinalStep that of the
// record of a run's final step (also EventStepStart with Final), and
// LogRunEnd is the message of the record of a run's end (also
// EventRunEnd): a front end that shows those events may leave the
// records out.
const (
	LogDoomLoop  = "doom loop"
	LogFinalStep = "final step: tools disabled"
	LogRunEnd    = "run end"
)

// stream sends req, retrying failures per the run's RetryPolicy. Which
// failures retry is the Model's call: a *ProviderError with Retryable set
// (the provider adapter decides from the HTTP status or the network error);
// the loop never looks at statuses. An error wrapping context.Canceled, or
// any error once ctx is done, aborts the run. A ProviderError not marked
// retryable, the last failed try, or a server asking (RetryAfter) for a
// longer wait than MaxDelay stops the run with provider_error; any other
// error stops it with error. On failure stream returns the stop reason and
// the error. text says whether streamed text goes to Runner.OnText.
func (ru *run) stream(ctx context.Context, req Request, text bool) (Response, StopReason, error) {
	p := ru.retry
	var onText func(string)
	if text {
		onText = ru.onText
	}
	for attempt := 1; ; attempt++ {
		ru.r.flush()
		resp, err := ru.a.Model.Stream(ctx, req, onText)
		if err == nil {
			return resp, "", nil
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return Response{}, StopAborted, err
		}
		var pe *ProviderError
		if !errors.As(err, &pe) {
			ru.log.Error().Err(err).Msg(LogRequestFailed)
			return Response{}, StopError, fmt.Errorf("model %s: %w", ru.a.ModelID, err)
		}
		if !pe.Retryable {
			ru.log.Error().Err(err).Int("status", pe.Status).Msg(LogRequestFailed + " (not retryable)")
			return Response{}, StopProviderError, err
		}
		if attempt >= p.Attempts {
			ru.log.Error().Err(err).Int("status", pe.Status).Int("attempts", attempt).Msg(LogRequestFailed + ": attempts exhausted")
			return Response{}, StopProviderError, fmt.Errorf("giving up after %d attempts: %w", attempt, err)
		}
		delay := ru.backoff(p, attempt)
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > p.MaxDelay {
				ru.log.Error().Err(err).Dur("retry_after", pe.RetryAfter).Dur("max_delay", p.MaxDelay).Msg(LogRequestFailed + ": server asks for too long a wait")
				return Response{}, StopProviderError, fmt.Errorf("server asked to wait %s before retrying, more than max_delay %s: %w", pe.RetryAfter, p.MaxDelay, err)
			}
			delay = pe.RetryAfter
		}
		// The delay is logged to the millisecond: its jitter has no meaning below.
		ru.log.Warn().Err(err).Int("status", pe.Status).Int("attempt", attempt).Dur("delay", delay.Round(time.Millisecond)).Msg(LogRequestFailed + ": retrying")
		ru.emit(Event{Type: EventRetry, Step: ru.res.Steps, StepsMax: ru.stepsMax, Attempt: attempt,
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
	r.flush()
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
