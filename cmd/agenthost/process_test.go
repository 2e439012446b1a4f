package main

import (
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestProcPolicy: all processors while a run starts, one after its first
// step, all again while two or more tool calls (at any depth) are in
// flight, one when they end; a run's end resets the count.
func TestProcPolicy(t *testing.T) {
	procs := 4
	set := func(n int) int {
		old := procs
		if n > 0 {
			procs = n
		}
		return old
	}
	p := startProcPolicy(set)
	steps := []struct {
		ev   loop.Event
		want int
	}{
		{loop.Event{Type: loop.EventRunStart}, 4},
		{loop.Event{Type: loop.EventToolStart}, 4},
		{loop.Event{Type: loop.EventToolEnd}, 4},
		{loop.Event{Type: loop.EventStepEnd, Depth: 1}, 4}, // a subagent's step
		{loop.Event{Type: loop.EventStepEnd}, 1},
		{loop.Event{Type: loop.EventToolStart}, 1},
		{loop.Event{Type: loop.EventToolStart, Depth: 1}, 4},
		{loop.Event{Type: loop.EventToolEnd, Depth: 1}, 1},
		{loop.Event{Type: loop.EventToolEnd}, 1},
		{loop.Event{Type: loop.EventToolStart}, 1},
		{loop.Event{Type: loop.EventToolStart}, 4},
		{loop.Event{Type: loop.EventRunEnd}, 1},
		{loop.Event{Type: loop.EventToolStart}, 1},
	}
	for i, s := range steps {
		p.event(s.ev)
		if procs != s.want {
			t.Fatalf("after event %d (%s at depth %d): %d processors, want %d", i, s.ev.Type, s.ev.Depth, procs, s.want)
		}
	}
	if startProcPolicy(func(int) int { return 1 }) != nil {
		t.Error("a policy for one processor")
	}
	var none *procPolicy
	none.event(loop.Event{Type: loop.EventToolStart}) // does nothing
}
