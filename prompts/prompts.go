// Package prompts holds the texts the loop injects into agent runs, and
// their defaults: the final-step messages (step limit, tool-call budget, token
// and cost limits, doom loop), the error result given to a repeated tool call, and the compaction
// request.
//
// It is a leaf of the pipeline: the texts are embedded from the .md files in
// this directory with go:embed, and the package imports nothing of the
// project. Set is the one type of a prompt set (loop.Prompts is Set): the
// host puts an agent's own prompts (max_steps_prompt, ...) in
// loop.Agent.Prompts, and the loop uses Default for those left blank.
package prompts

import (
	_ "embed"
	"strings"
)

var (
	//go:embed max_steps.md
	maxSteps string
	//go:embed budget.md
	budget string
	//go:embed tokens.md
	tokens string
	//go:embed cost.md
	cost string
	//go:embed doom_loop.md
	doomLoop string
	//go:embed doom_warn.md
	doomWarn string
	//go:embed compaction.md
	compaction string
)

// Set is one set of prompts. Each text is sent as a user-role message,
// except DoomWarn, which is the content of the error result given to a
// repeated tool call.
type Set struct {
	// MaxSteps is sent on the final step when the step cap is reached.
	MaxSteps string
	// Budget is sent on the final step when the tool-call budget is used up.
	Budget string
	// Tokens is sent on the final step when the token limit is near.
	Tokens string
	// Cost is sent on the final step when the cost limit is near.
	Cost string
	// DoomLoop is sent on the final step when a doom loop stopped the run.
	DoomLoop string
	// DoomWarn answers a repeated tool call that was not executed.
	DoomWarn string
	// Compaction asks the model to summarise the conversation.
	Compaction string
}

// Default returns the built-in prompts, with surrounding white space trimmed.
func Default() Set {
	return Set{
		MaxSteps:   strings.TrimSpace(maxSteps),
		Budget:     strings.TrimSpace(budget),
		Tokens:     strings.TrimSpace(tokens),
		Cost:       strings.TrimSpace(cost),
		DoomLoop:   strings.TrimSpace(doomLoop),
		DoomWarn:   strings.TrimSpace(doomWarn),
		Compaction: strings.TrimSpace(compaction),
	}
}
