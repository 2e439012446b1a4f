package loop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		policy    RetryPolicy
		script    []reply
		wantStop  StopReason
		wantSlept []time.Duration
		wantRetry []int // status of each retry event
		wantErr   string
	}{
		{
			name:   "retry after is honoured",
			script: []reply{failure(429, true, 1500*time.Millisecond), failure(503, true, 0), text("ok")},
			// 1.5s from the server, then backoff 2s for the second failure.
			wantStop: StopCompleted, wantSlept: []time.Duration{1500 * time.Millisecond, 2 * time.Second}, wantRetry: []int{429, 503},
		},
		{
			name:     "backoff doubles and is capped",
			policy:   RetryPolicy{Attempts: 6, Initial: 500 * time.Millisecond, MaxDelay: 3 * time.Second},
			script:   []reply{failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), text("ok")},
			wantStop: StopCompleted, wantSlept: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second},
			wantRetry: []int{500, 500, 500, 500, 500},
		},
		{
			name:     "attempts cap",
			policy:   RetryPolicy{Attempts: 3},
			script:   []reply{failure(502, true, 0), failure(502, true, 0), failure(502, true, 0), text("never")},
			wantStop: StopProviderError, wantSlept: []time.Duration{time.Second, 2 * time.Second}, wantRetry: []int{502, 502},
			wantErr: "giving up after 3 attempts: provider: HTTP 502: status 502",
		},
		{
			name:     "default attempts is 5",
			script:   []reply{failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), text("never")},
			wantStop: StopProviderError, wantSlept: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantRetry: []int{0, 0, 0, 0}, wantErr: "giving up after 5 attempts",
		},
		{
			name:     "not retryable",
			script:   []reply{failure(401, false, 0), text("never")},
			wantStop: StopProviderError, wantErr: "provider: HTTP 401: status 401",
		},
		{
			name:     "retry after longer than max delay",
			policy:   RetryPolicy{MaxDelay: 10 * time.Second},
			script:   []reply{failure(429, true, time.Minute), text("never")},
			wantStop: StopProviderError, wantErr: "server asked to wait 1m0s before retrying, more than max_delay 10s",
		},
		{
			name:     "an error that is not a ProviderError",
			script:   []reply{{err: errors.New("cassette: no recorded response")}, text("never")},
			wantStop: StopError, wantErr: "model fake: cassette: no recorded response",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			a := testAgent(m, newTools("read_file"), 3)
			a.Retry = tt.policy
			r, rec, slept := testRunner()
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			if res.StopReason != tt.wantStop {
				t.Errorf("stop %s, want %s", res.StopReason, tt.wantStop)
			}
			if res.Steps != 1 {
				t.Errorf("steps %d, want 1 (retries never consume steps)", res.Steps)
			}
			if n := len(rec.of(EventStepEnd)); n != 1 {
				t.Errorf("%d step.end events, want 1 (also after a failed request)", n)
			}
			if diff := cmp.Diff(tt.wantSlept, *slept); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			retries := rec.of(EventRetry)
			var statuses []int
			for i, e := range retries {
				statuses = append(statuses, e.Status)
				if e.Attempt != i+1 || e.DelayMS == nil || *e.DelayMS != tt.wantSlept[i].Milliseconds() || e.Message == "" {
					t.Errorf("retry event %d = %+v", i, e)
				}
			}
			if diff := cmp.Diff(tt.wantRetry, statuses); diff != "" {
				t.Errorf("retry statuses (-want +got):\n%s", diff)
			}
			if tt.wantErr != "" && (len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tt.wantErr)) {
				t.Errorf("Errors = %q, want one containing %q", res.Errors, tt.wantErr)
			}
			if tt.wantErr == "" && len(res.Errors) != 0 {
				t.Errorf("Errors = %q, want none", res.Errors)
			}
			// Err is the error that stopped the run, its cause reachable.
			switch {
			case tt.wantStop == StopCompleted && res.Err != nil:
				t.Errorf("Err = %v for a completed run", res.Err)
			case tt.wantStop != StopCompleted && (res.Err == nil || res.Err.Error() != res.Errors[0]):
				t.Errorf("Err = %v, want the error of Errors %q", res.Err, res.Errors)
			}
			var pe *ProviderError
			if tt.wantStop == StopProviderError && !errors.As(res.Err, &pe) {
				t.Errorf("Err = %v does not wrap the *ProviderError", res.Err)
			}
		})
	}
}

func TestBackoffJitter(t *testing.T) {
	ru := &run{r: &Runner{Jitter: func() float64 { return 0 }}}
	p := RetryPolicy{Initial: time.Second, MaxDelay: time.Minute}
	if got := ru.backoff(p, 1); got != 800*time.Millisecond {
		t.Errorf("backoff with jitter 0 = %v, want 800ms", got)
	}
	ru.r.Jitter = func() float64 { return 0.999 }
	if got := ru.backoff(p, 3); got < 4790*time.Millisecond || got > 4800*time.Millisecond {
		t.Errorf("backoff of try 3 with jitter 0.999 = %v, want just under 4.8s", got)
	}
	if got := ru.backoff(p, 40); got != time.Minute {
		t.Errorf("backoff of try 40 = %v, want the 1m cap", got)
	}
}
