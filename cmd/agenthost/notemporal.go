//go:build notemporal

package main

import (
	"context"
	"flag"
	"fmt"
)

// Built with -tags notemporal: no Temporal SDK in the binary, and the
// commands that need it say so.

type tflags struct{ address *string }

func temporalFlags(fs *flag.FlagSet) tflags {
	return tflags{address: fs.String("temporal", "", "not available: built with -tags notemporal")}
}

type temporalRun struct {
	agent, prompt, session string
	json, events           bool
	approve                *approveFlags
}

func noTemporal(e *env) int {
	fmt.Fprintln(e.stderr, "agenthost: this build has no Temporal support (built with -tags notemporal); build without the tag for worker, runs and run --temporal")
	return exitUsage
}

func runTemporal(_ context.Context, _ string, _ tflags, _ temporalRun, e *env) int {
	return noTemporal(e)
}

func cmdWorker(_ context.Context, _ []string, e *env) int { return noTemporal(e) }
func cmdRuns(_ context.Context, _ []string, e *env) int   { return noTemporal(e) }
