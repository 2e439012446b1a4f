package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/internal/session"
)

// sessionsRemove is `sessions rm ID...` and `sessions prune --older-than D
// [--dry-run]`. Every session is tried; a session a run holds is kept and
// reported, and the exit code is 1 when any was not removed. A dry run
// lists what would go, as git clean -n does, and removes nothing.
func sessionsRemove(dataDir string, pos []string, olderThan string, dryRun bool, e *env) int {
	var ids []string
	switch pos[0] {
	case "rm":
		if len(pos) < 2 || olderThan != "" {
			return usageErr(e, "usage: agenthost sessions rm ID... (an id, a unique prefix, or last)")
		}
		for _, ref := range pos[1:] {
			id, err := session.Resolve(dataDir, ref)
			if err != nil {
				return usageErr(e, "sessions rm: %v", err)
			}
			ids = append(ids, id)
		}
	case "prune":
		if len(pos) != 1 || olderThan == "" {
			return usageErr(e, "usage: agenthost sessions prune --older-than DURATION [--dry-run] (%s)", session.AgeUnits)
		}
		age, err := session.ParseAge(olderThan)
		if err != nil {
			return usageErr(e, "sessions prune: --older-than %q: %v", olderThan, err)
		}
		ms, err := session.List(dataDir)
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: sessions: %v\n", err)
			return exitError
		}
		cutoff := time.Now().Add(-age)
		for _, m := range ms {
			if m.Created.Before(cutoff) {
				ids = append(ids, m.ID)
			}
		}
	}
	if dryRun {
		for _, id := range ids {
			fmt.Fprintf(e.stdout, "would remove %s\n", id)
		}
		fmt.Fprintf(e.stderr, "%d %s would be removed (dry run: nothing removed)\n", len(ids), term.Plural(len(ids), "session", "sessions"))
		return exitOK
	}
	code := exitOK
	for _, id := range ids {
		if err := session.Remove(dataDir, id); err != nil {
			if errors.Is(err, session.ErrNotFound) && pos[0] == "rm" {
				fmt.Fprintf(e.stderr, "agenthost: sessions rm: %v (list sessions with 'agenthost sessions list')\n", err)
				return exitUsage
			}
			fmt.Fprintf(e.stderr, "agenthost: sessions %s: %v\n", pos[0], err)
			code = exitError
			continue
		}
		fmt.Fprintf(e.stdout, "removed %s\n", id)
	}
	if pos[0] == "prune" {
		fmt.Fprintf(e.stderr, "%d %s removed\n", len(ids), term.Plural(len(ids), "session", "sessions"))
	}
	return code
}

// writeJSON prints v as indented JSON: what every --json of a command that
// prints data writes.
func writeJSON(e *env, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitError
	}
	return exitOK
}

// resolveSession turns the --session value into the id it names (a unique
// prefix, or last).
func resolveSession(dataDir string, ref *string, e *env) int {
	if *ref == "" {
		return exitOK
	}
	id, err := session.Resolve(dataDir, *ref)
	if err != nil {
		return usageErr(e, "--session %s: %v (list sessions with 'agenthost sessions list')", *ref, err)
	}
	*ref = id
	return exitOK
}
