// Package procs chooses how many processors run the Go code of a process
// that runs one agent at a time (`agenthost run`, `agenthost chat`).
//
// Such a run is one loop waiting on one thing at a time: the model, then a
// tool. With two or more processors the Go scheduler spends much of a step
// spinning and waking the other processor (measured: a step with an Extism
// tool 0.30–0.33 ms of CPU with two, 0.20–0.23 with one; docs/decisions.md,
// "one processor for a run's loop"). So once Manage is called the process
// runs on one processor, except while something needs more: the plugins
// compiling in the background at the start of a run (Hold), and a
// response's parallel tool calls (Call, from the second call in flight).
// A GOMAXPROCS set by the user is left alone, as is every process that
// never calls Manage (`mcp serve`, `worker`: many runs at once).
package procs

import (
	"os"
	"runtime"
	"sync"
)

var (
	mu      sync.Mutex
	managed bool // Manage was called and the user did not set GOMAXPROCS
	all     int  // the processors the process started with
	holds   int  // reasons to use all of them now
	calls   int  // tool calls in flight
)

// Manage puts the process on one processor whenever nothing holds more.
func Manage() {
	mu.Lock()
	defer mu.Unlock()
	if managed || os.Getenv("GOMAXPROCS") != "" {
		return
	}
	all = runtime.GOMAXPROCS(0)
	if all <= 1 {
		return
	}
	managed = true
	apply()
}

// apply sets the processors for the current holds; mu is held.
func apply() {
	want := 1
	if holds > 0 {
		want = all
	}
	if runtime.GOMAXPROCS(0) != want {
		runtime.GOMAXPROCS(want)
	}
}

// change adds d to the holds; mu is held.
func change(d int) {
	holds += d
	apply()
}

// once returns a function that runs undo under mu the first time it is
// called, and does nothing after.
func once(undo func()) func() {
	var o sync.Once
	return func() {
		o.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			undo()
		})
	}
}

// Hold uses all processors until the returned function is called.
func Hold() (release func()) {
	mu.Lock()
	defer mu.Unlock()
	if !managed {
		return func() {}
	}
	change(+1)
	return once(func() { change(-1) })
}

// Call marks a tool call in flight until the returned function is called:
// while two or more are, all processors are used.
func Call() (done func()) {
	mu.Lock()
	defer mu.Unlock()
	if !managed {
		return func() {}
	}
	if calls++; calls == 2 {
		change(+1)
	}
	return once(func() {
		if calls--; calls == 1 {
			change(-1)
		}
	})
}

// reset undoes Manage (tests).
func reset() {
	mu.Lock()
	defer mu.Unlock()
	if managed {
		runtime.GOMAXPROCS(all)
	}
	managed, all, holds, calls = false, 0, 0, 0
}
