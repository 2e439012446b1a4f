//go:build notemporal

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Built with -tags notemporal: no Temporal SDK in the binary, and the
// commands that need it say so.

type tflags struct{ address *string }

func temporalFlags(fs *pflag.FlagSet) tflags {
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

func newWorkerCmd(c *cli) *cobra.Command {
	return noTemporalCmd(c, "worker", "Serve durable runs of a Temporal server")
}
func newRunsCmd(c *cli) *cobra.Command {
	return noTemporalCmd(c, "runs", "Manage the durable runs of a Temporal server")
}

// noTemporalCmd is a command of this build that says it is not available,
// whatever its arguments.
func noTemporalCmd(c *cli, name, short string) *cobra.Command {
	cmd := &cobra.Command{Use: name, Short: short + " (not in this build)", DisableFlagParsing: true}
	return c.action(cmd, func(_ context.Context, _ []string, e *env) int { return noTemporal(e) })
}
