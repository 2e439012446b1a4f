package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/config"
)

// starterWorkspace is the folder 'agenthost init' makes for the starter's
// mount: the only one its tools see, read-write. The project's own files
// (agents.hcl, prompts/, data_dir) stay out of their reach.
const starterWorkspace = config.StarterWorkspace

// cmdInit writes a starter agents.hcl and prompts/ in the current directory,
// and makes workspace/ unless it is a directory already, refusing to
// overwrite anything.
func cmdInit(_ context.Context, args []string, e *env) int {
	fs := newFlags("init", e)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		return usageErr(e, "init takes no arguments (got %q)", pos)
	}
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
		f, err := os.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.Write(files[n])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
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
	fmt.Fprintln(e.stdout, "next: set OPENAI_BASE_URL (and OPENAI_API_KEY), then: agenthost run \"your task\"")
	return exitOK
}
