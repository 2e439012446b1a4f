package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/scenario"
)

// newTestCmd is `agenthost test`: it runs txtar scenario files (package
// scenario): each file holds the agent's config, the model's scripted
// answers and the commands to run with their expected output. See
// docs/testing.md.
//
// Flags: -v prints every scenario's log, -run TEXT keeps the scenarios whose
// name contains TEXT, -update rewrites a failing cmp's expected file inside
// the scenario file, -timeout D (default 10m) fails what still runs after D.
//
// Paths may be files or directories (every *.txtar in it); the default is
// testdata/agenthost. The scenario environment has AGENTHOST_PROJECT set to
// the directory 'agenthost test' ran in, so a scenario can run the
// project's own config with -c $AGENTHOST_PROJECT/agents.hcl.
// defaultScenarioDir is where 'agenthost test' looks without a PATH;
// scenarioHint says what to put there.
const (
	defaultScenarioDir = "testdata/agenthost"
	scenarioHint       = "A scenario is a .txtar file there: commands (fakemodel start, agenthost run, stdout ...), then the files they use; agenthost init writes a first one, and docs/testing.md says how to write more"
)

func newTestCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Run scenario tests (txtar files) against agenthost",
		Long: `Run the scenarios of the .txtar files in PATH (files or directories; default
testdata/agenthost): each runs commands in a fresh directory and checks their output.`,
		Example: "  agenthost test\n  agenthost test -v -run tool testdata/agenthost",
	}
	fs := cmd.Flags()
	verbose := fs.BoolP("verbose", "v", false, "print every scenario's log, not only failures")
	run := fs.String("run", "", "run only scenarios whose name contains this `text`")
	timeout := fs.Duration("timeout", 10*time.Minute, "fail the scenarios still running after this `duration`; their commands are killed")
	update := fs.Bool("update", false, "rewrite a failing cmp's expected file when it is part of the scenario file")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) == 0 {
			pos = []string{defaultScenarioDir}
			if _, err := os.Stat(defaultScenarioDir); errors.Is(err, os.ErrNotExist) {
				return usageErr(e, "test: no scenario files: there is no %s/ here. %s", defaultScenarioDir, scenarioHint)
			}
		}
		files, err := scenario.Find(pos, *run)
		if err != nil {
			return usageErr(e, "test: %v", err)
		}
		if len(files) == 0 {
			if *run != "" {
				return usageErr(e, "test: no .txtar scenario files matching -run %q in %s", *run, strings.Join(pos, ", "))
			}
			return usageErr(e, "test: no .txtar scenario files in %s. %s", strings.Join(pos, ", "), scenarioHint)
		}

		// Every scenario shares the compilation cache 'agenthost run' would
		// use (the user's, or $AGENTHOST_CACHE_DIR), checked private here
		// once: each scenario has its own HOME.
		cache, err := host.ResolveCacheDir(e.getenv("AGENTHOST_CACHE_DIR"))
		if err != nil {
			return usageErr(e, "test: %v", err)
		}
		// Scenarios run 'exec agenthost': this very executable.
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
			return exitError
		}
		wd, _ := os.Getwd()
		sum, err := scenario.Run(ctx, scenario.Options{
			Files:     files,
			CacheDir:  cache,
			Agenthost: self,
			Env:       map[string]string{"AGENTHOST_PROJECT": wd},
			Verbose:   *verbose,
			Update:    *update,
			Timeout:   *timeout,
			Stdout:    e.stdout,
		})
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(e.stderr, "agenthost: test: interrupted")
			return exitAborted
		case err != nil:
			fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
			return exitError
		}
		fmt.Fprintln(e.stdout, sum)
		if sum.Failed > 0 {
			return exitError
		}
		return exitOK
	})
}
