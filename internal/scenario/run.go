package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Find lists the scenario files of paths, sorted: a file is taken as it
// is, a directory gives its *.txtar files (not its subdirectories'). When
// match is not "", only the files whose name contains it are kept. A path
// that cannot be read is an error; no file at all is not.
func Find(paths []string, match string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, "*.txtar"))
		files = append(files, m...)
	}
	if match != "" {
		var sel []string
		for _, f := range files {
			if strings.Contains(filepath.Base(f), match) {
				sel = append(sel, f)
			}
		}
		files = sel
	}
	sort.Strings(files)
	return files, nil
}

// Options say which scenarios Run runs, and how.
type Options struct {
	// Files are the scenario files (see Find), run one after the other.
	Files []string
	// CacheDir is the compilation cache every scenario shares; it must be
	// private to the user (host.ResolveCacheDir checks that).
	CacheDir string
	// Agenthost is the agenthost executable the scenarios run as
	// 'agenthost': a link to it in the private temporary directory comes
	// first on their PATH. "" leaves PATH as it is.
	Agenthost string
	// Env is added to every scenario's environment.
	Env map[string]string
	// Verbose prints every scenario's log, not only the failures'.
	Verbose bool
	// Update rewrites a failing cmp's expected file when that file is part
	// of the scenario file, instead of failing.
	Update bool
	// Timeout fails the scenarios still running after it, killing the
	// command they wait for; 0 means no limit.
	Timeout time.Duration
	// Stdout receives one report per scenario as it ends: "ok   NAME" (and
	// its log when Verbose), "FAIL NAME" and its log, or "SKIP NAME" and
	// the reason.
	Stdout io.Writer
}

// Summary counts the scenarios of a Run by outcome.
type Summary struct {
	Passed, Failed, Skipped int
}

// String is "N passed, M failed", and ", K skipped" when some were.
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return out
}

// Run runs the scenarios of opts.Files with Params, one after the other:
// a failing scenario is reported and counted, never fatal to the others.
// The error says what kept the scenarios from running (no private
// temporary directory, say), never that one failed. Run removes the
// private temporary directory (see PrivateTemp) before it returns.
//
// When ctx is done Run returns ctx's error at once and reports nothing
// more. testscript cannot stop a scenario midway: the one running goes on
// in the background, so the caller is expected to exit (a signal that
// cancelled ctx reached the scenario's commands too).
func Run(ctx context.Context, opts Options) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	priv, err := PrivateTemp()
	if err != nil {
		return Summary{}, err
	}
	defer RemovePrivateTemp()
	p := Params(opts.CacheDir, opts.Env)
	if opts.Agenthost != "" {
		bin := filepath.Join(priv, "bin")
		if err := os.Symlink(opts.Agenthost, filepath.Join(bin, "agenthost")); err != nil {
			return Summary{}, err
		}
		setup := p.Setup
		p.Setup = func(e *testscript.Env) error {
			if err := setup(e); err != nil {
				return err
			}
			e.Setenv("PATH", bin+string(os.PathListSeparator)+e.Getenv("PATH"))
			return nil
		}
	}
	p.Files = opts.Files
	p.UpdateScripts = opts.Update
	if opts.Timeout > 0 {
		p.Deadline = time.Now().Add(opts.Timeout)
	}

	out := &gate{w: opts.Stdout}
	t := &reporter{out: out, verbose: opts.Verbose}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			// testscript ends a failed scenario through FailNow's panic;
			// RunT itself returns normally once every scenario ran.
			if r := recover(); r != nil && r != errFailNow {
				panic(r)
			}
		}()
		testscript.RunT(t, p)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		out.close()
		return Summary{}, ctx.Err()
	}
	if t.fail {
		// RunT itself gave up (no temporary directory, say): no scenario
		// ran to the end, so none may count as passed.
		return Summary{}, errors.New(strings.TrimSpace(t.log.String()))
	}
	return Summary{Passed: t.passed, Failed: t.failed, Skipped: t.skipped}, nil
}

// gate passes writes on to w until closed, then drops them.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gate) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(b), nil
	}
	return g.w.Write(b)
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

var (
	errFailNow = errors.New("scenario failed")
	errSkip    = errors.New("scenario skipped")
)

// reporter implements testscript.T for scenarios run outside 'go test':
// the top one runs every scenario through Run, each scenario gets its own.
type reporter struct {
	out     io.Writer
	verbose bool
	name    string
	parent  *reporter

	mu      sync.Mutex
	log     strings.Builder
	failed  int
	passed  int
	skipped int
	fail    bool
	skipMsg string
}

func (t *reporter) Skip(args ...any) {
	t.skipMsg = strings.TrimSpace(fmt.Sprintln(args...))
	panic(errSkip)
}

func (t *reporter) Fatal(args ...any) {
	t.Log(args...)
	t.FailNow()
}

func (t *reporter) Parallel() {}

func (t *reporter) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(&t.log, args...)
}

func (t *reporter) FailNow() {
	t.fail = true
	panic(errFailNow)
}

func (t *reporter) Verbose() bool { return t.verbose }

// Run runs one scenario; a failure is reported and counted, never fatal to
// the others.
func (t *reporter) Run(name string, f func(testscript.T)) {
	sub := &reporter{out: t.out, verbose: t.verbose, name: name, parent: t}
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
