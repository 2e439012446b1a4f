package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/pflag"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/loop"
)

// approveFlags are --approve PATTERN (repeatable) and --yes of run and
// chat: calls they allow run without a question. They answer approval
// questions only; a doom loop under "ask" is always put to a person.
type approveFlags struct {
	patterns []string
	yes      bool
}

func addApproveFlags(fs *pflag.FlagSet) *approveFlags {
	af := &approveFlags{}
	fs.Func("approve", "run the calls of tools matching `pattern` (a name, or * ? [...]) without asking; repeatable", func(s string) error {
		if err := loop.ApprovePatternError(s); err != nil {
			return err
		}
		af.patterns = append(af.patterns, s)
		return nil
	})
	fs.BoolVar(&af.yes, "yes", false, "run every call that needs approval without asking")
	return af
}

// cliApprover answers the questions of run and chat: --approve and --yes
// first, then a person at the terminal; with neither, the call is refused
// with a reason saying how to allow it, to the model and, a line on
// stderr, to the person.
type cliApprover struct {
	flags *approveFlags
	tty   *term.Asker // nil without a terminal
	// e's stderr takes the line about a call refused for want of a
	// terminal; mu keeps concurrent calls' lines whole.
	e  *env
	mu sync.Mutex
}

func (a *cliApprover) Decide(ctx context.Context, q loop.Question) loop.Decision {
	if q.Kind == loop.AskApproval && a.flags != nil {
		if a.flags.yes {
			return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--yes"}
		}
		for _, p := range a.flags.patterns {
			if loop.MatchApprovePattern(p, q.Call.Name) {
				return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--approve " + p}
			}
		}
	}
	if a.tty != nil {
		return a.tty.Decide(ctx, q)
	}
	if q.Kind == loop.AskDoomLoop {
		return loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: "no terminal to ask"}
	}
	allow := fmt.Sprintf("--approve %s (or --yes)", shquote.Quote(q.Call.Name))
	if a.e != nil {
		a.mu.Lock()
		fmt.Fprintf(a.e.stderr, "agenthost: refused a call of %s: it needs approval and there is no terminal to ask; allow it with %s\n", errText(a.e, q.Call.Name), allow)
		a.mu.Unlock()
	}
	return loop.Decision{Verdict: loop.Deny, By: loop.ByNone,
		Reason: "no terminal to ask; the user can allow it with " + allow + " on the command line"}
}

// terminalAsker returns an asker when a person can answer (term.OpenAsker):
// standard input is a terminal; nil when nobody can answer.
func terminalAsker(e *env) *term.Asker {
	return term.OpenAsker(e.stdin, e.stderr, e.stdinTTY, e.stderrTTY)
}

// newApprover is the Approver of run and chat, and a function that
// releases the terminal it opened. Its questions show what a call of
// write_file or edit would do to the file as a diff (h.FileChange).
func newApprover(e *env, af *approveFlags, h *host.Host) (*cliApprover, func()) {
	a := &cliApprover{flags: af, tty: terminalAsker(e), e: e}
	if a.tty == nil {
		return a, func() {}
	}
	a.tty.Change = h.FileChange
	return a, func() { a.tty.Close() }
}
