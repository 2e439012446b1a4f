package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/defaults"
)

// starterWorkspace is the folder 'agenthost init' makes for the starter's
// mount: the only one its tools see, read-write. The project's own files
// (agents.hcl, prompts/, data_dir) stay out of their reach.
const starterWorkspace = config.StarterWorkspace

// newInitCmd is `agenthost init`: it writes a starter agents.hcl, prompts/ and a first
// scenario test (testdata/agenthost/) in the current directory, and makes
// workspace/ unless it is a directory already, refusing to overwrite
// anything.
func newInitCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starter agents.hcl, prompts/, a first scenario test and workspace/ here",
		Example: `  agenthost init
  export AGENTHOST_MODEL=qwen3:8b
  agenthost doctor`,
	}
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
		files := config.Starter()
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		var exist []string
		for _, n := range names {
			if _, err := os.Lstat(n); !errors.Is(err, os.ErrNotExist) {
				exist = append(exist, n)
			}
		}
		haveWorkspace := false
		if st, err := os.Lstat(starterWorkspace); err == nil {
			if !st.IsDir() {
				exist = append(exist, starterWorkspace)
			}
			haveWorkspace = st.IsDir()
		}
		if len(exist) > 0 {
			fmt.Fprintf(e.stderr, "agenthost: init would overwrite %s; nothing written (move them away or edit them by hand)\n", strings.Join(exist, ", "))
			return exitUsage
		}
		for _, n := range names {
			if err := os.MkdirAll(filepath.Dir(n), 0o755); err != nil {
				fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
				return exitError
			}
			if err := writeNew(n, files[n], 0o644); err != nil {
				fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
				return exitError
			}
			fmt.Fprintf(e.stdout, "wrote %s\n", n)
		}
		if haveWorkspace {
			fmt.Fprintf(e.stdout, "kept %s/ (the folder the agents work in)\n", starterWorkspace)
		} else if err := os.Mkdir(starterWorkspace, 0o755); err != nil {
			fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
			return exitError
		} else {
			fmt.Fprintf(e.stdout, "made %s/ (the folder the agents work in)\n", starterWorkspace)
		}
		if code := initDataDir(e); code != exitOK {
			return code
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

// initDataDir makes the data_dir of the starter (private, as sessions
// need it) with a .gitignore that keeps the sessions, which hold every
// prompt and tool result, out of version control. One already there is
// kept as it is.
func initDataDir(e *env) int {
	dir := defaults.DataDir
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
		return exitError
	}
	ignore := filepath.Join(dir, ".gitignore")
	err := writeNew(ignore, []byte("# agenthost's data (sessions, recordings): not for version control.\n*\n"), 0o600)
	if errors.Is(err, os.ErrExist) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: init: %v\n", err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "wrote %s (the sessions stay out of git)\n", ignore)
	return exitOK
}

// writeNew writes data to the file name, which it makes: one that exists
// is left alone (os.ErrExist).
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
