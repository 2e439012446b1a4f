package main

import (
	"os"
	"runtime"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// Process policy. The libraries (host, loop, host/plugin) never set
// process-wide state; the commands that run one agent at a time (run,
// chat) choose it here.
//
// Processors: a run is one loop waiting on one thing at a time, the model
// or a tool. With two or more processors the Go scheduler spends much of a
// step spinning up and waking the idle ones, so the run uses one processor
// except while there is work to share: from the start of a run until its
// first step ends (the plugins loaded from their cached load facts compile
// in the background then, and a first call waits for its module), and
// while two or more tool calls are in flight. The run's own events say
// which: run.start, step.end at the top level, tool.start and tool.end at
// any depth. A GOMAXPROCS set by the user is left alone, as are the
// commands that serve many runs at once (mcp serve, worker).

// procPolicy switches GOMAXPROCS on a run's events. Its methods are safe
// for concurrent use; a nil *procPolicy does nothing.
type procPolicy struct {
	mu       sync.Mutex
	all      int  // the processors the process started with
	starting bool // from run.start until the first step.end at depth 0
	calls    int  // tool calls in flight
	set      func(int) int
}

// newProcPolicy returns the policy of a command running one agent at a
// time, starting as a run starts; nil when the user set GOMAXPROCS or
// there is one processor.
func newProcPolicy() *procPolicy {
	if os.Getenv("GOMAXPROCS") != "" {
		return nil
	}
	return startProcPolicy(runtime.GOMAXPROCS)
}

// startProcPolicy is newProcPolicy with set as runtime.GOMAXPROCS.
func startProcPolicy(set func(int) int) *procPolicy {
	p := &procPolicy{all: set(0), set: set, starting: true}
	if p.all <= 1 {
		return nil
	}
	p.apply()
	return p
}

// apply sets the processors for the present state; mu is held (or p is
// not shared yet).
func (p *procPolicy) apply() {
	want := 1
	if p.starting || p.calls >= 2 {
		want = p.all
	}
	if p.set(0) != want {
		p.set(want)
	}
}

// event follows a run's events.
func (p *procPolicy) event(ev loop.Event) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ev.Type == loop.EventRunStart && ev.Depth == 0:
		p.starting = true
	case ev.Type == loop.EventStepEnd && ev.Depth == 0:
		p.starting = false
	case ev.Type == loop.EventRunEnd && ev.Depth == 0:
		p.starting, p.calls = false, 0
	case ev.Type == loop.EventToolStart:
		p.calls++
	case ev.Type == loop.EventToolEnd && p.calls > 0:
		p.calls--
	default:
		return
	}
	p.apply()
}

// sink returns next, with p following the events on the way.
func (p *procPolicy) sink(next func(loop.Event)) loop.Sink {
	if p == nil {
		return loop.SinkFunc(next)
	}
	return loop.SinkFunc(func(ev loop.Event) {
		p.event(ev)
		next(ev)
	})
}
