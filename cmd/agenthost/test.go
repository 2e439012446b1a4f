package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/host"
)

// cmdTest runs txtar scenario files with the testscript engine: each file
// holds the agent's config, the model's scripted answers and the commands
// to run with their expected output. See docs/testing.md.
//
// Flags: -v prints every scenario's log, -run TEXT keeps the scenarios whose
// name contains TEXT, -update rewrites a failing cmp's expected file inside
// the scenario file, -timeout D (default 10m) fails what still runs after D.
//
// Paths may be files or directories (every *.txtar in it); the default is
// testdata/agenthost. The scenario environment has AGENTHOST_PROJECT set to
// the directory 'agenthost test' ran in, so a scenario can run the
// project's own config with -c $AGENTHOST_PROJECT/agents.hcl.
func cmdTest(ctx context.Context, args []string, e *env) int {
	fs := newFlags("test", e)
	verbose := fs.Bool("v", false, "print every scenario's log, not only failures")
	run := fs.String("run", "", "run only scenarios whose name contains this `text`")
	timeout := fs.Duration("timeout", 10*time.Minute, "fail the scenarios still running after this `duration`; their commands are killed")
	update := fs.Bool("update", false, "rewrite a failing cmp's expected file when it is part of the scenario file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) == 0 {
		pos = []string{"testdata/agenthost"}
	}
	var files []string
	for _, p := range pos {
		st, err := os.Stat(p)
		if err != nil {
			return usageErr(e, "test: %v", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, "*.txtar"))
		files = append(files, m...)
	}
	if *run != "" {
		var sel []string
		for _, f := range files {
			if strings.Contains(filepath.Base(f), *run) {
				sel = append(sel, f)
			}
		}
		files = sel
	}
	if len(files) == 0 {
		if *run != "" {
			return usageErr(e, "test: no .txtar scenario files matching -run %q in %s", *run, strings.Join(pos, ", "))
		}
		return usageErr(e, "test: no .txtar scenario files in %s", strings.Join(pos, ", "))
	}
	sort.Strings(files)

	// Every scenario shares the compilation cache 'agenthost run' would
	// use (the user's, or $AGENTHOST_CACHE_DIR), checked private here
	// once: each scenario has its own HOME.
	cache, err := host.ResolveCacheDir(e.getenv("AGENTHOST_CACHE_DIR"))
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
		return exitUsage
	}

	// Scenarios run 'exec agenthost': put this very executable on PATH,
	// linked from a private temporary directory removed at the end.
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
		return exitError
	}
	priv, err := privateTemp()
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
		return exitError
	}
	defer removePrivateTemp()
	bin := filepath.Join(priv, "bin")
	if err := os.Symlink(self, filepath.Join(bin, "agenthost")); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: test: %v\n", err)
		return exitError
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	wd, _ := os.Getwd()

	p := scenarioParams(cache, map[string]string{"AGENTHOST_PROJECT": wd})
	p.Files = files
	p.UpdateScripts = *update
	if *timeout > 0 {
		p.Deadline = time.Now().Add(*timeout)
	}
	// The scenarios cannot be cancelled from outside testscript: on the
	// first interrupt stop at once (the commands they run got it too).
	var (
		doneMu sync.Mutex
		done   bool
	)
	defer func() {
		doneMu.Lock()
		done = true
		doneMu.Unlock()
	}()
	go func() {
		<-ctx.Done()
		doneMu.Lock()
		defer doneMu.Unlock()
		if done {
			return // cancelled because we returned
		}
		removePrivateTemp()
		fmt.Fprintln(e.stderr, "agenthost: test: interrupted")
		os.Exit(exitAborted)
	}()
	t := &scenarioT{out: e.stdout, verbose: *verbose}
	func() {
		defer func() {
			// testscript ends a failed scenario through FailNow's panic;
			// RunT itself returns normally once every scenario ran.
			if r := recover(); r != nil && r != errFailNow {
				panic(r)
			}
		}()
		testscript.RunT(t, p)
	}()
	if t.fail {
		// RunT itself gave up (no temporary directory, say): no scenario
		// ran to the end, so none may count as passed.
		fmt.Fprintf(e.stderr, "agenthost: test: %s\n", strings.TrimSpace(t.log.String()))
		return exitError
	}
	summary := fmt.Sprintf("%d passed, %d failed", t.passed, t.failed)
	if t.skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", t.skipped)
	}
	fmt.Fprintln(e.stdout, summary)
	if t.failed > 0 {
		return exitError
	}
	return exitOK
}

var errFailNow = fmt.Errorf("scenario failed")

// scenarioT implements testscript.T for scenarios run outside 'go test'.
type scenarioT struct {
	out     io.Writer
	verbose bool
	name    string
	parent  *scenarioT

	mu      sync.Mutex
	log     strings.Builder
	failed  int
	passed  int
	skipped int
	fail    bool
	skipMsg string
}

func (t *scenarioT) Skip(args ...any) {
	t.skipMsg = strings.TrimSpace(fmt.Sprintln(args...))
	panic(errSkip)
}

var errSkip = fmt.Errorf("scenario skipped")

func (t *scenarioT) Fatal(args ...any) {
	t.Log(args...)
	t.FailNow()
}

func (t *scenarioT) Parallel() {}

func (t *scenarioT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(&t.log, args...)
}

func (t *scenarioT) FailNow() {
	t.fail = true
	panic(errFailNow)
}

func (t *scenarioT) Verbose() bool { return t.verbose }

// Run runs one scenario; a failure is reported and counted, never fatal to
// the others.
func (t *scenarioT) Run(name string, f func(testscript.T)) {
	sub := &scenarioT{out: t.out, verbose: t.verbose, name: name, parent: t}
	skipped := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				switch r {
				case errFailNow:
				case errSkip:
					skipped = true
				default:
					sub.fail = true
					fmt.Fprintf(&sub.log, "panic: %v\n", r)
				}
			}
		}()
		f(sub)
	}()
	switch {
	case skipped:
		t.skipped++
		if sub.skipMsg != "" {
			fmt.Fprintf(t.out, "SKIP %s: %s\n", name, sub.skipMsg)
		} else {
			fmt.Fprintf(t.out, "SKIP %s\n", name)
		}
	case sub.fail:
		t.failed++
		fmt.Fprintf(t.out, "FAIL %s\n%s\n", name, indentLines(sub.log.String()))
	default:
		t.passed++
		fmt.Fprintf(t.out, "ok   %s\n", name)
		if t.verbose {
			fmt.Fprintln(t.out, indentLines(sub.log.String()))
		}
	}
}

func indentLines(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
