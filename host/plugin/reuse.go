package plugin

import (
	"bytes"
	"context"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// Instance reuse. A plugin whose manifest says "reuse": true is started
// with AGENTHOST_REUSE=1 and serves many calls from one instance: the host
// writes one request per line on its stdin and the guest answers each with
// one line on stdout, a CallToolResult (docs/plugin-protocol.md). Between
// calls the instance waits, idle, in the Scope of the agent's run that used
// it; it is never handed to another run or another agent. It is retired
// (stdin closed, so the guest exits) after reuseCalls calls, after any
// failure, tool error, quota hit or truncated answer, and when the scope
// closes. Grants, the memory limit (one linear memory for the instance's
// life), the timeout and the output cap (both per call) and the write quota
// (reset before each call) are those of a one-call instance.

// reuseCalls is how many calls one instance serves before it is replaced:
// whatever a long-lived guest accumulates (beyond its memory, which
// limits.memory bounds anyway) is bounded, at the cost of one start-up
// every reuseCalls calls, which is small beside a call once spread over
// that many.
const reuseCalls = 1000

// maxIdle bounds the idle instances a scope keeps per agent and plugin: as
// many as the agent's parallel calls of the plugin needed, up to this.
const maxIdle = 4

// Scope holds the idle instances of reuse plugins for one run. Front ends
// make one per run (host.Run does), pass it down with WithScope, and Close
// it when the run ends; calls made without a scope serve one call per
// instance. It is safe for concurrent use.
type Scope struct {
	mu     sync.Mutex
	closed bool
	idle   map[scopeKey][]idler
}

// idler is an instance kept between calls: a reuse agenthost/1 instance
// (*instance) or a reused Extism one (*extismHeld).
type idler interface {
	alive() bool
	retire()
}

func (i *instance) alive() bool { return i.ctx.Err() == nil }

type scopeKey struct {
	owner any
	t     *tool
}

// NewScope makes an empty scope.
func NewScope() *Scope { return &Scope{idle: map[scopeKey][]idler{}} }

type scopeCtxKey struct{}

type scopeRef struct {
	s     *Scope
	owner any
}

// WithScope returns ctx carrying s: calls of reuse plugins made with it
// keep their instances in s between calls.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeCtxKey{}, scopeRef{s: s})
}

// WithScopeOwner narrows the scope in ctx (if any) to owner, a comparable
// value naming one agent of the run: instances kept for one owner are
// never given to calls of another.
func WithScopeOwner(ctx context.Context, owner any) context.Context {
	ref, ok := ctx.Value(scopeCtxKey{}).(scopeRef)
	if !ok || ref.s == nil {
		return ctx
	}
	return context.WithValue(ctx, scopeCtxKey{}, scopeRef{s: ref.s, owner: owner})
}

func scopeOf(ctx context.Context) (scopeRef, bool) {
	ref, ok := ctx.Value(scopeCtxKey{}).(scopeRef)
	return ref, ok && ref.s != nil
}

// take returns an idle live instance kept for (owner, t), or nil.
func (s *Scope) take(owner any, t *tool) idler {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := scopeKey{owner, t}
	for list := s.idle[k]; len(list) > 0; list = s.idle[k] {
		i := list[len(list)-1]
		s.idle[k] = list[:len(list)-1]
		if i.alive() {
			return i
		}
		i.retire() // it broke the framing while idle, or the runtime closed
	}
	return nil
}

// put keeps i for the next call of (owner, t); false when the scope is
// closed or already keeps maxIdle such instances.
func (s *Scope) put(owner any, t *tool, i idler) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := scopeKey{owner, t}
	if s.closed || len(s.idle[k]) >= maxIdle {
		return false
	}
	s.idle[k] = append(s.idle[k], i)
	return true
}

// Close retires every idle instance; later calls do not keep theirs.
func (s *Scope) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for k, list := range s.idle {
		for _, i := range list {
			i.retire()
		}
		delete(s.idle, k)
	}
}

// serveLine hands one request line to a reuse instance and waits for its
// answer line (true) or for the instance to end (false), honouring the
// call's context and timeout. Output and stderr are captured afresh and
// the write quota starts again for the call.
func (i *instance) serveLine(ctx context.Context, line []byte, timeout time.Duration) bool {
	frame := make(chan struct{})
	i.mu.Lock()
	i.stdout = sandbox.NewOutput(i.limits.MaxOutput, i.flood)
	i.stderr = sandbox.NewOutput(i.limits.MaxOutput, i.flood)
	i.nextNotes(ctx)
	i.frame = frame
	i.serving = true
	i.mu.Unlock()
	i.quota.Reset()
	i.calls++
	i.arm(timeout, errTimeout)
	stop := context.AfterFunc(ctx, func() { i.cancel(context.Cause(ctx)) })
	go func() {
		// Ends when the guest has read the line or the pipe is closed.
		_, _ = i.pipeW.Write(line)
	}()
	select {
	case <-frame:
	case <-i.done:
	}
	stop()
	i.disarm()
	if i.notes != nil {
		i.notes.Set(nil, nil) // stderr after the call goes to the host's log
	}
	select {
	case <-frame:
		return true
	default:
		return false
	}
}

// answer turns the answer line of a reuse call into its outcome.
func (i *instance) answer(t *tool) (loop.ToolResult, *sandbox.Failure) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if f := i.quotaFailure(); f != nil {
		return loop.ToolResult{}, f
	}
	if i.stdout.Truncated() {
		// Over max_output: the answer is cut, as a one-call instance's.
		return loop.ToolResult{Content: i.stdout.Text(), IsError: true}, nil
	}
	res := parseResult(i.stdout.Head(), i.limits.MaxOutput)
	if res.IsError && strings.TrimSpace(res.Content) == "" {
		res.Content = i.stderr.Tail()
		if res.Content == "" {
			res.Content = fmt.Sprintf("tool %q failed without a message", t.spec.Name)
		}
	}
	return res, nil
}

// retire ends a reuse instance: its stdin closes, so the guest sees the end
// of its requests and exits; the watchdog stops one that does not.
func (i *instance) retire() {
	i.arm(i.limits.Timeout, errRetired)
	_ = i.pipeW.Close()
}

// reuseStdout is the stdout of a reuse instance: the bytes up to and
// including the first newline of a call are its answer. Output while no
// call is being served, or after the answer line, breaks the framing: the
// instance is stopped (and replaced at its next call).
type reuseStdout struct{ i *instance }

func (w reuseStdout) Write(b []byte) (int, error) {
	i := w.i
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.frame == nil {
		if len(b) > 0 {
			i.cancel(errFraming)
		}
		return len(b), nil
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		i.stdout.Write(b)
		return len(b), nil
	}
	i.stdout.Write(b[:nl+1])
	close(i.frame)
	i.frame = nil
	i.serving = false
	if nl+1 < len(b) {
		i.cancel(errFraming)
	}
	return len(b), nil
}

// reuseStderr is the stderr of a reuse instance: the current call's.
type reuseStderr struct{ i *instance }

func (w reuseStderr) Write(b []byte) (int, error) {
	w.i.mu.Lock()
	defer w.i.mu.Unlock()
	return w.i.stderr.Write(b)
}
