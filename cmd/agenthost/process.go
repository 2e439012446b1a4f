package main

import (
	"os"
	"runtime"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// Process policy. The libraries (host, loop, host/plugin) never set
// process-wide state; the commands that run one agent at a time (run,
// chat) choose it here, from the run's own events (run.start, step.end at
// the top level, tool.start and tool.end at any depth). The commands that
// serve many runs at once (mcp serve, worker) leave the process as Go
// starts it.
//
// Processors: a run is one loop waiting on one thing at a time, the model
// or a tool. With two or more processors the Go scheduler spends much of a
// step spinning up and waking the idle ones, so the run uses one processor
// except while there is work to share: from the start of a run until its
// first step ends (the plugins loaded from their cached load facts compile
// in the background then, and a first call waits for its module), and
// while two or more tool calls are in flight. A GOMAXPROCS set by the user
// is left alone.
//
// Memory: loading and compiling plugins touch code and read-only data all
// over the executable (the compiler, the builtin modules' bytes), of which
// a run's steps need a small part. run drops the executable's read-only
// pages from the resident set before its first step, and both commands
// drop them again once a run's first step has ended (its first calls
// waited for their modules to compile), off the loop's path; the pages
// the steps use fault back in from the page cache. No collection is
// forced: giving the heap's free pages back made the steps that follow
// fault them in again.

// runPolicy applies the process policy to the runs of one command. Its
// methods are safe for concurrent use; a nil *runPolicy does nothing.
type runPolicy struct {
	mu       sync.Mutex
	all      int  // the processors the process started with; 0: left alone
	starting bool // from run.start until the first step.end at depth 0
	calls    int  // tool calls in flight
	released bool // this run's pages were dropped after its first step
	set      func(int) int
	release  func()
	// endStartup, when set, is called at every tool.start and top-level
	// step.end; it acts once (startupGC.end).
	endStartup func()
}

// newRunPolicy returns the policy of a command running one agent at a
// time, starting as a run starts. endStartup, when not nil, is called at
// the first tool call and when a top-level step ends: run ends start-up
// there (startgc.go), so that a text-only first step runs without
// collections and a module a call waits for compiles with them.
func newRunPolicy(endStartup func()) *runPolicy {
	all := 0
	if os.Getenv("GOMAXPROCS") == "" {
		all = runtime.GOMAXPROCS(0)
	}
	p := startRunPolicy(all, runtime.GOMAXPROCS, trimExecutable)
	p.endStartup = endStartup
	return p
}

// startRunPolicy is newRunPolicy with all processors (fewer than two: the
// processors are left alone), set as runtime.GOMAXPROCS and release as
// what drops the executable's pages.
func startRunPolicy(all int, set func(int) int, release func()) *runPolicy {
	if all <= 1 {
		all = 0
	}
	p := &runPolicy{all: all, starting: true, set: set, release: release}
	p.apply()
	return p
}

// apply sets the processors for the present state; mu is held (or p is
// not shared yet).
func (p *runPolicy) apply() {
	if p.all == 0 {
		return
	}
	want := 1
	if p.starting || p.calls >= 2 {
		want = p.all
	}
	if p.set(0) != want {
		p.set(want)
	}
}

// event follows a run's events.
func (p *runPolicy) event(ev loop.Event) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ev.Type == loop.EventRunStart && ev.Depth == 0:
		p.starting, p.released = true, false
	case ev.Type == loop.EventStepEnd && ev.Depth == 0:
		p.startupOver()
		if !p.released {
			p.released = true
			go p.release()
		}
		p.starting = false
	case ev.Type == loop.EventRunEnd && ev.Depth == 0:
		p.starting, p.calls = false, 0
	case ev.Type == loop.EventToolStart:
		p.startupOver()
		p.calls++
	case ev.Type == loop.EventToolEnd && p.calls > 0:
		p.calls--
	default:
		return
	}
	p.apply()
}

// startupOver ends start-up, if the command asked for it; mu is held.
func (p *runPolicy) startupOver() {
	if p.endStartup != nil {
		p.endStartup()
	}
}

// sink returns next, with p following the events on the way.
func (p *runPolicy) sink(next func(loop.Event)) loop.Sink {
	if p == nil {
		return loop.SinkFunc(next)
	}
	return loop.SinkFunc(func(ev loop.Event) {
		p.event(ev)
		next(ev)
	})
}
