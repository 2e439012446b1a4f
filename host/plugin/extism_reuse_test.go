package plugin

import (
	"context"
	"errors"
	"github.com/agenthost/agenthost/internal/sandbox"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// reuseExtism loads our mcp.run test plugin with reuse = true.
func reuseExtism(t *testing.T, timeout time.Duration) (*Runtime, *Plugin) {
	t.Helper()
	r := newRuntime(t)
	s := extismSpec(t, "mcp", mcpPlugin(t, "v1"))
	s.Reuse = true
	if timeout > 0 {
		s.Limits.Timeout = timeout
	}
	p := load(t, r, s)
	p.SetPrestart(false)
	return r, p
}

// count calls the count tool and returns what it says.
func count(t *testing.T, ctx context.Context, p *Plugin) int {
	t.Helper()
	res, err := p.Call(ctx, loop.ToolCall{ID: "c", Name: "count", Arguments: `{}`})
	if err != nil || res.IsError {
		t.Fatalf("count: %+v, %v", res, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(res.Content))
	if err != nil {
		t.Fatalf("count said %q", res.Content)
	}
	return n
}

// TestExtismReuseServesManyCalls: with reuse, the calls of one run's
// scope go to one instance, whose globals carry over (Extism's own
// semantics); another scope (another run) or another owner (another agent)
// gets its own instance; without a scope every call has a fresh one.
func TestExtismReuseServesManyCalls(t *testing.T) {
	r, p := reuseExtism(t, 0)
	base := context.Background()

	s1 := NewScope()
	ctx := WithScope(base, s1)
	started := r.started.Load()
	for want := 1; want <= 4; want++ {
		if got := count(t, ctx, p); got != want {
			t.Fatalf("call %d on a reused instance counted %d", want, got)
		}
	}
	if n := r.started.Load() - started; n != 1 {
		t.Fatalf("4 calls in one scope started %d instances, want 1", n)
	}
	if got := count(t, WithScopeOwner(ctx, "another agent"), p); got != 1 {
		t.Fatalf("another owner's first call counted %d, want 1 (a fresh instance)", got)
	}
	s2 := NewScope()
	if got := count(t, WithScope(base, s2), p); got != 1 {
		t.Fatalf("another scope's first call counted %d, want 1 (a fresh instance)", got)
	}
	s1.Close()
	s2.Close()
	if got := count(t, ctx, p); got != 1 {
		t.Fatalf("a call after its scope closed counted %d, want 1", got)
	}
	for range 2 {
		if got := count(t, base, p); got != 1 {
			t.Fatalf("a call without a scope counted %d, want 1", got)
		}
	}
}

// TestExtismReuseRetiresAfterFailure: a timeout, a trap or a tool error
// retires the instance; the next call starts a fresh one and works.
func TestExtismReuseRetiresAfterFailure(t *testing.T) {
	_, p := reuseExtism(t, 2*time.Second)
	s := NewScope()
	defer s.Close()
	ctx := WithScope(context.Background(), s)
	for _, bad := range []struct {
		tool string
		kind sandbox.FailureKind
	}{{"spin", sandbox.FailureTimeout}, {"panic", sandbox.FailureTrap}, {"soft_fail", ""}} {
		count(t, ctx, p)
		if got := count(t, ctx, p); got != 2 {
			t.Fatalf("before %s: counted %d, want 2", bad.tool, got)
		}
		res, err := p.Call(ctx, loop.ToolCall{ID: "b", Name: bad.tool, Arguments: `{}`})
		var f *sandbox.Failure
		switch {
		case bad.kind == "" && (err != nil || !res.IsError):
			t.Fatalf("%s: %+v, %v; want an error result", bad.tool, res, err)
		case bad.kind != "" && (!errors.As(err, &f) || f.Kind != bad.kind):
			t.Fatalf("%s: %+v, %v; want a %s failure", bad.tool, res, err, bad.kind)
		}
		if got := count(t, ctx, p); got != 1 {
			t.Fatalf("after %s: counted %d, want 1 (a fresh instance)", bad.tool, got)
		}
		// Leave the scope empty for the next round.
		s.Close()
		s = NewScope()
		ctx = WithScope(context.Background(), s)
	}
}

// TestExtismReuseCancel: a call cancelled by its caller ends at once and
// the instance is not kept.
func TestExtismReuseCancel(t *testing.T) {
	_, p := reuseExtism(t, time.Minute)
	s := NewScope()
	defer s.Close()
	ctx, cancel := context.WithCancel(WithScope(context.Background(), s))
	count(t, ctx, p)
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, loop.ToolCall{ID: "s", Name: "spin", Arguments: `{}`})
		done <- err
	}()
	// Cancel once the spin call has taken the instance from the scope.
	for idle := 1; idle > 0; {
		s.mu.Lock()
		idle = len(s.idle[scopeKey{nil, p.ext.key}])
		s.mu.Unlock()
		if idle > 0 {
			runtime.Gosched()
		}
	}
	cancel()
	select {
	case err := <-done:
		var f *sandbox.Failure
		if !errors.As(err, &f) || f.Kind != sandbox.FailureCanceled {
			t.Fatalf("cancelled spin: %v, want a canceled failure", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call did not end")
	}
	if got := count(t, WithScope(context.Background(), s), p); got != 1 {
		t.Fatalf("after a cancelled call: counted %d, want 1", got)
	}
}
