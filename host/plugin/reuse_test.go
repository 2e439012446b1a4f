package plugin

import (
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// reusePlugin loads the reuse test guest with a rw /workspace mount.
func reusePlugin(t *testing.T, r *Runtime, limits func(*Limits)) (*Plugin, string) {
	t.Helper()
	s := spec(t, "reuse", guests["reuse"])
	ws := t.TempDir()
	s.Mounts = []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}
	if limits != nil {
		limits(&s.Limits)
	}
	return load(t, r, s), ws
}

func callText(t *testing.T, ctx context.Context, p *Plugin, tool, args string) string {
	t.Helper()
	res, err := p.Call(ctx, loop.ToolCall{ID: "c", Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content
}

// TestReuseOneInstancePerScopeAndOwner: a reuse plugin serves the calls of
// one owner (agent) of one scope (run) from one instance; another owner,
// another scope, or no scope at all never gets that instance.
func TestReuseOneInstancePerScopeAndOwner(t *testing.T) {
	r := newRuntime(t)
	p, _ := reusePlugin(t, r, nil)
	run1 := NewScope()
	defer run1.Close()
	a := WithScopeOwner(WithScope(context.Background(), run1), "agent a")
	for n := 1; n <= 3; n++ {
		if got, want := callText(t, a, p, "count", "{}"), fmt.Sprintf("call %d reuse=true", n); got != want {
			t.Fatalf("call %d of agent a: %q, want %q", n, got, want)
		}
	}
	// A scope keeps its own instance: no spare was pre-started beside it.
	if n := len(p.ah.shared.warm); n != 0 {
		t.Errorf("%d spare instances pre-started for scoped calls, want 0", n)
	}
	b := WithScopeOwner(WithScope(context.Background(), run1), "agent b")
	if got := callText(t, b, p, "count", "{}"); got != "call 1 reuse=true" {
		t.Errorf("agent b shares agent a's instance: %q", got)
	}
	run2 := NewScope()
	defer run2.Close()
	a2 := WithScopeOwner(WithScope(context.Background(), run2), "agent a")
	if got := callText(t, a2, p, "count", "{}"); got != "call 1 reuse=true" {
		t.Errorf("another run shares the instance: %q", got)
	}
	for range 2 {
		if got := callText(t, context.Background(), p, "count", "{}"); got != "call 1 reuse=true" {
			t.Errorf("a call without a scope reused an instance: %q", got)
		}
	}
	// Calls without a scope get a fresh instance each, pre-started.
	if n := len(p.ah.shared.warm); n != 1 {
		t.Errorf("%d spare instances after calls without a scope, want 1", n)
	}
	// After the run's scope closes, its instances are gone.
	run1.Close()
	if got := callText(t, a, p, "count", "{}"); got != "call 1 reuse=true" {
		t.Errorf("after Close: %q", got)
	}
}

// TestReuseRetiresAfterTrouble: a tool error, a crash, a timeout, output
// over the cap or past the answer line each end the instance; the next
// call starts afresh. Failures are reported as for one-call instances.
func TestReuseRetiresAfterTrouble(t *testing.T) {
	r := newRuntime(t)
	p, _ := reusePlugin(t, r, func(l *Limits) { l.Timeout = time.Second; l.MaxOutput = 1 << 10 })
	sc := NewScope()
	defer sc.Close()
	ctx := WithScopeOwner(WithScope(context.Background(), sc), "a")
	for _, tc := range []struct {
		tool, args string
		kind       sandbox.FailureKind // "" = a result
		content    string
	}{
		{"fail", "{}", "", "it failed"},
		{"crash", "{}", sandbox.FailureExit, ""},
		{"spin", "{}", sandbox.FailureTimeout, ""},
		{"flood", `{"n":1500}`, "", "[output truncated"},
		{"flood", `{"n":5000}`, "", "[output truncated"}, // one write: answered, then stopped
		{"stray", "{}", "", "first"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			// Two calls: the instance is kept between them.
			first := callText(t, ctx, p, "count", "{}")
			var n int
			if _, err := fmt.Sscanf(first, "call %d", &n); err != nil {
				t.Fatalf("count: %q", first)
			}
			if got, want := callText(t, ctx, p, "count", "{}"), fmt.Sprintf("call %d reuse=true", n+1); got != want {
				t.Fatalf("before: %q, want %q", got, want)
			}
			res, err := p.Call(ctx, loop.ToolCall{ID: "c", Name: tc.tool, Arguments: tc.args})
			var f *sandbox.Failure
			switch {
			case tc.kind != "":
				if !errors.As(err, &f) || f.Kind != tc.kind {
					t.Fatalf("got %+v, %v; want a %s failure", res, err, tc.kind)
				}
			case err != nil || !strings.Contains(res.Content, tc.content):
				t.Fatalf("got %+v, %v; want %q", res, err, tc.content)
			}
			if got := callText(t, ctx, p, "count", "{}"); got != "call 1 reuse=true" {
				t.Errorf("after %s the instance was kept: %q", tc.tool, got)
			}
		})
	}
}

// TestReuseQuotaPerCall: the write quota of a reused instance starts again
// for every call; one call going past it still fails.
func TestReuseQuotaPerCall(t *testing.T) {
	r := newRuntime(t)
	p, ws := reusePlugin(t, r, func(l *Limits) { l.MaxWrite = 1000; l.MaxFiles = 10 })
	sc := NewScope()
	defer sc.Close()
	ctx := WithScopeOwner(WithScope(context.Background(), sc), "a")
	for n := 1; n <= 3; n++ {
		got := callText(t, ctx, p, "write", fmt.Sprintf(`{"n":600,"name":"f%d"}`, n))
		if want := fmt.Sprintf("call %d wrote 600: <nil>", n); got != want {
			t.Fatalf("write %d: %q, want %q", n, got, want)
		}
	}
	_, err := p.Call(ctx, loop.ToolCall{ID: "c", Name: "write", Arguments: `{"n":1200,"name":"big"}`})
	var f *sandbox.Failure
	if !errors.As(err, &f) || f.Kind != sandbox.FailureQuota {
		t.Fatalf("write past the quota: %v, want a quota failure", err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() > 1000 {
		t.Errorf("big: %v, %v; want at most 1000 bytes", fi, err)
	}
	if got := callText(t, ctx, p, "count", "{}"); got != "call 1 reuse=true" {
		t.Errorf("after a quota failure the instance was kept: %q", got)
	}
}

// TestReuseRecycles: an instance serves reuseCalls calls, then a new one
// takes over.
func TestReuseRecycles(t *testing.T) {
	r := newRuntime(t)
	p, _ := reusePlugin(t, r, nil)
	sc := NewScope()
	defer sc.Close()
	ctx := WithScopeOwner(WithScope(context.Background(), sc), "a")
	for n := 1; n <= reuseCalls; n++ {
		if got, want := callText(t, ctx, p, "count", "{}"), fmt.Sprintf("call %d reuse=true", n); got != want {
			t.Fatalf("call %d: %q", n, got)
		}
	}
	if got := callText(t, ctx, p, "count", "{}"); got != "call 1 reuse=true" {
		t.Errorf("call %d: %q, want a new instance", reuseCalls+1, got)
	}
}
