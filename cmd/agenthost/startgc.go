package main

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Start-up collections. Package init, the command tree, the config and a
// cached plugin load allocate a few megabytes, nearly all of it kept, and
// a run's first step compiles its plugins' modules in the background
// (host/plugin's CompileLoaded), which allocates far more, mostly garbage
// soon. With Go's default GOGC=100 the heap's first goals are 4 to 8 MB:
// a cached one-step run collected several times, each collection marking
// about the same live heap, and paid the write barriers and assists of
// every collection under way. So the process starts with collection off
// and a heap limit of startupHeap instead. Start-up ends, and the settings
// the process started with come back, when the command says so or at the
// first collection, which comes when the heap reaches the limit (an
// uncached load, which compiles every module, gets there). run ends it at
// its first tool call or when its first step ends, whichever comes first
// (process.go): a text-only first step runs without collections, and a
// module a call waits for compiles with them. The long-lived commands end
// it as they begin; validate and tools, which end with their load, do not
// end it. A GOGC or GOMEMLIMIT set by the user is left alone. Figures
// (bench/LOG.md, thirteenth round): a cached one-step run with three
// plugins took a fifth to a third less CPU, with the same peak resident
// set; ending start-up only at the first step's end cost a run whose
// first call waits for its module 1.3 MB of peak.

// startupHeap is the memory (mostly heap) the Go runtime may hold before
// start-up's first collection: above a cached load's few megabytes and a
// short run's background compilation, below a run's peak (under 50 MB).
const startupHeap = 32 << 20

// startupGC holds the collector's settings while start-up lasts. A nil
// *startupGC does nothing.
type startupGC struct {
	once    sync.Once
	percent int
	limit   int64
}

// gcSentinel is garbage from the start: its cleanup runs after the first
// collection. It holds a pointer so that it is not one of the tiny
// allocations batched together (whose cleanups may never run).
type gcSentinel struct {
	p *int
	_ [2]int
}

// deferStartupGC turns collection off for start-up, when getenv has
// neither GOGC nor GOMEMLIMIT.
func deferStartupGC(getenv func(string) string) *startupGC {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	g := &startupGC{percent: debug.SetGCPercent(-1), limit: debug.SetMemoryLimit(startupHeap)}
	runtime.AddCleanup(new(gcSentinel), (*startupGC).end, g)
	return g
}

// end gives the collector back the settings the process started with;
// once, and safe for concurrent use.
func (g *startupGC) end() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		debug.SetGCPercent(g.percent)
		debug.SetMemoryLimit(g.limit)
	})
}

// keepsStartup reports whether the command at path ends start-up itself
// (run) or is over when its load is (validate, tools): every other command
// ends it as it begins.
func keepsStartup(path string) bool {
	switch path {
	case "agenthost run", "agenthost validate", "agenthost tools":
		return true
	}
	return false
}
