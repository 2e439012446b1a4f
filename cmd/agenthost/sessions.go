package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/internal/textcut"
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
	list := func(asJSON *bool) func(context.Context, []string, *env) int {
		return func(_ context.Context, pos []string, e *env) int {
			if len(pos) > 0 {
				return usageErr(e, "sessions list takes no arguments (got %q)", pos)
			}
			dir, code := dataDir(e)
			if code != exitOK {
				return code
			}
			return sessionsList(dir, *asJSON, e)
		}
	}
	listCmd := &cobra.Command{
		Use:               "list",
		Short:             "List the sessions, newest first",
		Example:           "  agenthost sessions list --json",
		ValidArgsFunction: noFiles,
	}
	c.action(listCmd, list(jsonFlag(listCmd.Flags(), "print JSON")))

	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Print a session's transcript (or, with --html, a timeline page)",
		Example:           "  agenthost sessions show last\n  agenthost sessions show --html 20261127-0501 > run.html",
		ValidArgsFunction: c.completeSessions,
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
		ValidArgsFunction: c.completeSessions,
	}
	c.action(rm, func(_ context.Context, pos []string, e *env) int {
		dir, code := dataDir(e)
		if code != exitOK {
			return code
		}
		return sessionsRemove(dir, append([]string{"rm"}, pos...), "", e)
	})

	prune := &cobra.Command{
		Use:   "prune --older-than DURATION",
		Short: "Remove the sessions created longer ago than a duration",
		Long: `Remove every session created longer ago than --older-than (such as 720h, 30d or 2w). A
session a run holds is kept.`,
		Example:           "  agenthost sessions prune --older-than 30d",
		ValidArgsFunction: noFiles,
	}
	olderThan := prune.Flags().String("older-than", "", "remove the sessions created longer ago than this `duration` (such as 720h, 30d, 2w)")
	c.action(prune, func(_ context.Context, pos []string, e *env) int {
		dir, code := dataDir(e)
		if code != exitOK {
			return code
		}
		return sessionsRemove(dir, append([]string{"prune"}, pos...), *olderThan, e)
	})

	c.listGroup(g, list(jsonFlag(g.Flags(), "print JSON (as sessions list --json)")))
	g.AddCommand(listCmd, show, rm, prune)
	return g
}

// sessionsList prints the sessions of dataDir, newest first.
func sessionsList(dataDir string, asJSON bool, e *env) int {
	ms, err := session.List(dataDir)
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: sessions: %v\n", err)
		return exitError
	}
	if asJSON {
		return sessionsListJSON(dataDir, ms, e)
	}
	if len(ms) == 0 {
		fmt.Fprintf(e.stderr, "no sessions in %s\n", session.Dir(dataDir))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCREATED\tSTOP\tSTEPS\tTOKENS\tCOST\tPROMPT")
	for _, m := range ms {
		_, evs, _ := session.Events(dataDir, m.ID)
		t := summaryTexts(session.Summarize(evs))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", outText(e, m.ID), outText(e, m.Agent), m.Created.Format("2006-01-02 15:04:05"), t.stop, t.steps, t.tokens, t.cost, outText(e, t.prompt))
	}
	tw.Flush()
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
	if asJSON {
		if evs == nil {
			evs = []loop.Event{}
		}
		return writeJSON(e, struct {
			session.Meta
			Events []loop.Event `json:"events"`
		}{meta, evs})
	}
	if asHTML {
		if err := report.WriteHTML(e.stdout, meta, evs); err != nil {
			fmt.Fprintf(e.stderr, "agenthost: sessions show: %v\n", err)
			return exitError
		}
		return exitOK
	}
	for _, ev := range evs {
		if ev.Type != loop.EventMessage || ev.Msg == nil {
			continue
		}
		printMessage(e, ev)
	}
	t := summaryTexts(session.Summarize(evs))
	fmt.Fprintf(e.stdout, "-- stop: %s, steps %s\n", t.stop, t.steps)
	return exitOK
}

// summaryText is a session's summary (session.Summarize) as `sessions
// list` shows it: the last run's stop reason and steps ("unfinished" and
// "-" when that run has no run.end: it is still running, or its process
// was killed), the first prompt on one line and cut to 60 runes, the
// tokens of the finished runs with a "~" in front when a figure was
// estimated, their cost in USD or "-" when any run's cost is unknown (no
// price); tokens and cost are "-" without a finished run.
type summaryText struct {
	stop, steps, prompt, tokens, cost string
}

func summaryTexts(s session.Summary) summaryText {
	t := summaryText{stop: "unfinished", steps: "-", tokens: "-", cost: "-"}
	if s.Finished {
		t.stop, t.steps = string(s.Stop), fmt.Sprintf("%d/%d", s.Steps, s.StepsMax)
	}
	t.prompt = textcut.Line(s.Prompt, 61)
	if s.Runs > 0 {
		t.tokens = fmt.Sprint(s.Usage.TotalTokens)
		if s.Usage.Estimated {
			t.tokens = "~" + t.tokens
		}
		if s.CostKnown {
			t.cost = "$" + loop.USD(s.Cost)
		}
	}
	return t
}

// printMessage prints one message of a transcript. Everything in it may
// come from the model or a tool: on a terminal it is escaped.
func printMessage(e *env, ev loop.Event) {
	m := ev.Msg
	indent := strings.Repeat("  ", ev.Depth)
	who := outText(e, string(m.Role))
	if ev.Depth > 0 {
		who = outText(e, ev.Agent) + "/" + who
	}
	switch m.Role {
	case loop.RoleSystem:
		fmt.Fprintf(e.stdout, "%s[%s] %d chars\n", indent, who, len(m.Content))
		return
	case loop.RoleTool:
		status := ""
		if m.IsError {
			status = " error"
		}
		fmt.Fprintf(e.stdout, "%s[%s %s %s%s] %s\n", indent, who, outText(e, m.Name), outText(e, m.ToolCallID), status, outText(e, textcut.Clip(m.Content, 400)))
		return
	}
	if m.Content != "" {
		fmt.Fprintf(e.stdout, "%s[%s] %s\n", indent, who, outText(e, m.Content))
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(e.stdout, "%s[%s call %s] %s(%s)\n", indent, who, outText(e, c.ID), outText(e, c.Name), outText(e, textcut.Clip(c.Arguments, 400)))
	}
}
