package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/loop"
)

// newSessionsCmd is `agenthost sessions`: list (also without a command),
// show, rm and prune. -c is the group's: its data_dir holds the sessions.
func newSessionsCmd(c *cli) *cobra.Command {
	g := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove the sessions of the data_dir",
		Long: `Every run is a session under data_dir/sessions. Without a command, sessions lists them,
newest first. A session ID may be the whole id, a prefix that only one session has, or
"last" (the newest).`,
		Example:           "  agenthost sessions\n  agenthost sessions show last\n  agenthost sessions prune --older-than 30d",
		ValidArgsFunction: noFiles,
	}
	cfgFlag := configFlag(g.PersistentFlags())
	dataDir := func(e *env) (string, int) {
		cfg, code := loadConfig(configPath(*cfgFlag, e), e)
		if code != exitOK {
			return "", code
		}
		return cfg.Host.DataDir, exitOK
	}
	list := func(fs *pflag.FlagSet, asJSON *bool) func(context.Context, []string, *env) int {
		limit := fs.IntP("limit", "n", 0, "list only the newest `N` sessions (default: all)")
		all := fs.Bool("all", false, "list the sessions that failed before any model answer too")
		return func(_ context.Context, pos []string, e *env) int {
			if len(pos) > 0 {
				return usageErr(e, "sessions list takes no arguments (got %q)", pos)
			}
			if *limit < 0 {
				return usageErr(e, "sessions list: --limit %d: give a number of sessions, 1 or more (0, the default, lists all)", *limit)
			}
			dir, code := dataDir(e)
			if code != exitOK {
				return code
			}
			return sessionsList(dir, *asJSON, *all, *limit, e)
		}
	}
	c.listGroup(g, "List the sessions, newest first", "  agenthost sessions list --json\n  agenthost sessions list -n 5", list)

	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Print a session's transcript (or, with --html, a timeline page)",
		Example:           "  agenthost sessions show last\n  agenthost sessions show --html 20261127-0501 > run.html",
		ValidArgsFunction: c.complete().Sessions,
	}
	showJSON := jsonFlag(show.Flags(), "print the session and its events as JSON")
	asHTML := show.Flags().Bool("html", false, "print the session as one self-contained HTML page (a timeline)")
	c.action(show, func(_ context.Context, pos []string, e *env) int {
		if len(pos) != 1 {
			return usageErr(e, "usage: agenthost sessions show [--json | --html] ID (an id, a unique prefix, or last)")
		}
		dir, code := dataDir(e)
		if code != exitOK {
			return code
		}
		return sessionsShow(dir, pos[0], *showJSON, *asHTML, e)
	})

	rm := &cobra.Command{
		Use:               "rm ID...",
		Short:             "Remove sessions",
		Long:              "Remove the sessions named (ids, unique prefixes, or last). A session a run holds is refused.",
		Example:           "  agenthost sessions rm last",
		ValidArgsFunction: c.complete().Sessions,
	}
	c.action(rm, func(_ context.Context, pos []string, e *env) int {
		dir, code := dataDir(e)
		if code != exitOK {
			return code
		}
		return sessionsRemove(dir, append([]string{"rm"}, pos...), "", false, e)
	})

	prune := &cobra.Command{
		Use:   "prune --older-than DURATION [--dry-run]",
		Short: "Remove the sessions created longer ago than a duration",
		Long: `Remove every session created longer ago than --older-than: a number and a unit, ` + session.AgeUnits + `.
A session a run holds is kept. --dry-run lists the sessions that would be removed and
removes nothing.`,
		Example:           "  agenthost sessions prune --older-than 30d --dry-run\n  agenthost sessions prune --older-than 30d",
		ValidArgsFunction: noFiles,
	}
	olderThan := prune.Flags().String("older-than", "", "remove the sessions created longer ago than this `duration`: "+session.AgeUnits)
	dryRun := prune.Flags().Bool("dry-run", false, "list the sessions that would be removed; remove nothing")
	c.action(prune, func(_ context.Context, pos []string, e *env) int {
		dir, code := dataDir(e)
		if code != exitOK {
			return code
		}
		return sessionsRemove(dir, append([]string{"prune"}, pos...), *olderThan, *dryRun, e)
	})

	g.AddCommand(show, rm, prune)
	return g
}

// sessionsList prints the sessions of dataDir, newest first: the newest
// limit of them when limit is above 0.
func sessionsList(dataDir string, asJSON, all bool, limit int, e *env) int {
	ms, sums, hidden, err := session.ListSummaries(dataDir, limit, all)
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: sessions: %v\n", err)
		return exitError
	}
	if hidden > 0 && !asJSON {
		fmt.Fprintf(e.stderr, "%d %s that failed before any model answer %s not listed; sessions list --all lists %s\n",
			hidden, term.Plural(hidden, "session", "sessions"), term.Plural(hidden, "is", "are"), term.Plural(hidden, "it", "them"))
	}
	switch {
	case asJSON:
		return writeJSON(e, report.List(ms, sums))
	case len(ms) == 0:
		fmt.Fprintf(e.stderr, "no sessions in %s\n", session.Dir(dataDir))
	default:
		report.WriteTable(e.stdout, ms, sums, e.stdoutTTY)
	}
	return exitOK
}

// sessionsShow prints session ref of dataDir: its transcript, or JSON, or
// an HTML page.
func sessionsShow(dataDir, ref string, asJSON, asHTML bool, e *env) int {
	id, err := session.Resolve(dataDir, ref)
	if err != nil {
		return usageErr(e, "sessions show: %v", err)
	}
	meta, evs, err := session.Events(dataDir, id)
	if err != nil {
		return usageErr(e, "sessions show: %v", err)
	}
	switch {
	case asJSON:
		if evs == nil {
			evs = []loop.Event{}
		}
		return writeJSON(e, struct {
			session.Meta
			Events []loop.Event `json:"events"`
		}{meta, evs})
	case asHTML:
		if err := report.WriteHTML(e.stdout, meta, evs); err != nil {
			fmt.Fprintf(e.stderr, "agenthost: sessions show: %v\n", err)
			return exitError
		}
	default:
		report.WriteTranscript(e.stdout, evs, e.stdoutTTY)
	}
	return exitOK
}
