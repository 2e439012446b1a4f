package main

import (
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestRunPolicy: all processors while a run starts, one after its first
// step, all again while two or more tool calls (at any depth) are in
// flight, one when they end; a run's end resets the count. A run's pages
// are dropped once, after its first top-level step.
func TestRunPolicy(t *testing.T) {
	procs := 4
	set := func(n int) int {
		old := procs
		if n > 0 {
			procs = n
		}
		return old
	}
	released := make(chan struct{}, 4)
	p := startRunPolicy(4, set, func() { released <- struct{}{} })
	steps := []struct {
		ev      loop.Event
		want    int
		release bool
	}{
		{loop.Event{Type: loop.EventRunStart}, 4, false},
		{loop.Event{Type: loop.EventToolStart}, 4, false},
		{loop.Event{Type: loop.EventToolEnd}, 4, false},
		{loop.Event{Type: loop.EventStepEnd, Depth: 1}, 4, false}, // a subagent's step
		{loop.Event{Type: loop.EventStepEnd}, 1, true},
		{loop.Event{Type: loop.EventToolStart}, 1, false},
		{loop.Event{Type: loop.EventToolStart, Depth: 1}, 4, false},
		{loop.Event{Type: loop.EventToolEnd, Depth: 1}, 1, false},
		{loop.Event{Type: loop.EventToolEnd}, 1, false},
		{loop.Event{Type: loop.EventStepEnd}, 1, false}, // the second step: dropped already
		{loop.Event{Type: loop.EventToolStart}, 1, false},
		{loop.Event{Type: loop.EventToolStart}, 4, false},
		{loop.Event{Type: loop.EventRunEnd}, 1, false},
		{loop.Event{Type: loop.EventToolStart}, 1, false},
		{loop.Event{Type: loop.EventRunStart}, 4, false}, // chat's next turn
		{loop.Event{Type: loop.EventStepEnd}, 1, true},
	}
	for i, s := range steps {
		p.event(s.ev)
		if procs != s.want {
			t.Fatalf("after event %d (%s at depth %d): %d processors, want %d", i, s.ev.Type, s.ev.Depth, procs, s.want)
		}
		if s.release {
			<-released // dropped (on a goroutine of its own)
		}
	}
	select {
	case <-released:
		t.Error("pages dropped more than once a run")
	default:
	}

	// One processor, or GOMAXPROCS set by the user: processors left alone.
	procs = 3
	q := startRunPolicy(1, set, func() { released <- struct{}{} })
	q.event(loop.Event{Type: loop.EventRunStart})
	q.event(loop.Event{Type: loop.EventStepEnd})
	<-released
	if procs != 3 {
		t.Errorf("processors changed to %d, want them left alone", procs)
	}
	var none *runPolicy
	none.event(loop.Event{Type: loop.EventToolStart}) // does nothing
}

// TestRunPolicyEndsStartup: run's start-up (startgc.go) ends at the first
// tool call, or when a text-only first step ends; not before.
func TestRunPolicyEndsStartup(t *testing.T) {
	for name, evs := range map[string][]loop.Event{
		"tool call": {{Type: loop.EventRunStart}, {Type: loop.EventToolStart}},
		"text step": {{Type: loop.EventRunStart}, {Type: loop.EventStepEnd, Depth: 1}, {Type: loop.EventStepEnd}},
	} {
		ended := 0
		p := startRunPolicy(0, func(int) int { return 1 }, func() {})
		p.endStartup = func() { ended++ }
		for i, ev := range evs {
			p.event(ev)
			last := i == len(evs)-1
			if last && ended == 0 {
				t.Errorf("%s: start-up did not end at %s", name, ev.Type)
			}
			if !last && ended != 0 {
				t.Errorf("%s: start-up ended at %s (depth %d), before its time", name, ev.Type, ev.Depth)
			}
		}
	}
}
