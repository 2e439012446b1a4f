package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host/config"
)

// newInitCmd is `agenthost init`: it writes a starter agents.hcl, prompts/
// and a first scenario test (testdata/agenthost/) in the current
// directory, and makes workspace/ and the data_dir (config.WriteStarter),
// refusing to overwrite anything.
func newInitCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starter agents.hcl, prompts/, a first scenario test and workspace/ here",
		Example: `  agenthost init
  export AGENTHOST_MODEL=qwen3:8b
  agenthost doctor`,
	}
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
		err := config.WriteStarter(func(line string) { fmt.Fprintln(e.stdout, line) })
		var exist *config.ExistError
		if errors.As(err, &exist) {
			fmt.Fprintf(e.stderr, "agenthost: init %v\n", err)
			return exitUsage
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
			return exitError
		}
		fmt.Fprint(e.stdout, `next:
  export AGENTHOST_MODEL=qwen2.5:7b-instruct   # the model to use (default shown)
  export OPENAI_BASE_URL=http://127.0.0.1:11434/v1   # its server (default: Ollama), and OPENAI_API_KEY if it needs one
  agenthost doctor                             # checks the server, the key, the model and the plugins
  agenthost run "your task"
  agenthost test                               # runs testdata/agenthost/*.txtar on a scripted model
`)
		return exitOK
	})
}
