package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestStartupGC: start-up turns collection off under a heap limit, and
// end gives back the settings the process had, once; a GOGC or GOMEMLIMIT
// of the user's is left alone.
func TestStartupGC(t *testing.T) {
	before, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	g := deferStartupGC(func(string) string { return "" })
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("during start-up GOGC is %d, want off (-1)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != startupHeap {
		t.Errorf("during start-up the memory limit is %d, want %d", got, startupHeap)
	}
	g.end()
	g.end()
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Errorf("after start-up GOGC is %d, want 100 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after start-up the memory limit is %d, want none", got)
	}
	debug.SetGCPercent(100)

	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if g := deferStartupGC(func(k string) string {
			if k == v {
				return "200"
			}
			return ""
		}); g != nil {
			t.Errorf("with %s set, start-up changed the collector", v)
		}
	}
	var none *startupGC
	none.end() // tests build env without one
}

// TestStartupGCEndsAtFirstCollection: when the heap reaches the limit (here
// a forced collection), start-up ends by itself.
func TestStartupGCEndsAtFirstCollection(t *testing.T) {
	before, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	deferStartupGC(func(string) string { return "" })
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		if cur == 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is still %d after collections: start-up did not end at the first one", cur)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKeepsStartup: only run, validate and tools keep start-up past their
// beginning.
func TestKeepsStartup(t *testing.T) {
	for path, want := range map[string]bool{
		"agenthost run": true, "agenthost validate": true, "agenthost tools": true,
		"agenthost chat": false, "agenthost mcp serve": false, "agenthost worker": false,
	} {
		if got := keepsStartup(path); got != want {
			t.Errorf("keepsStartup(%q) = %v, want %v", path, got, want)
		}
	}
}
