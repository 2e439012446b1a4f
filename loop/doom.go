package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Doom-loop actions.
const (
	DoomWarn = "warn"
	DoomStop = "stop"
	DoomAsk  = "ask"
)

// defaultDoomThreshold applies when Agent.DoomThreshold is 0.
const defaultDoomThreshold = 3

// fallbackDoomWarn is the error result of a call refused under "warn" when
// the host leaves Prompts.DoomWarn empty.
const fallbackDoomWarn = "Not executed: you made this exact call several times in a row. Do not repeat it; try something else or give your answer."

// Asker asks the user what to do about a doom loop on an interactive terminal.
type Asker interface {
	// AskDoomLoop returns AnswerOnce, AnswerAlways or AnswerStop.
	AskDoomLoop(ctx context.Context, agent string, call ToolCall, count int) Answer
}

// Answer to a doom-loop question.
type Answer int

const (
	AnswerStop Answer = iota
	AnswerOnce
	AnswerAlways
)

// doom tracks consecutive identical calls. It says whether c may run and,
// when not, the error result to give it and whether the run is stopping.
func (ru *run) doom(ctx context.Context, c ToolCall) (run bool, content string, stop bool) {
	sig := c.Name + "\x00" + canonicalJSON(c.Arguments)
	if sig == ru.doomSig {
		ru.doomCount++
	} else {
		ru.doomSig, ru.doomCount = sig, 1
	}
	threshold := ru.a.DoomThreshold
	if threshold <= 0 {
		threshold = defaultDoomThreshold
	}
	if ru.doomOff || ru.doomCount < threshold {
		return true, "", false
	}

	action := ru.a.DoomAction
	if action == "" {
		action = DoomWarn
	}
	ev := Event{Type: EventDoomLoop, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments}
	log := ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Int("count", ru.doomCount).Str("action", action)
	switch {
	case action == DoomWarn && !ru.doomWarned:
		ru.doomWarned = true
		ev.Message = fmt.Sprintf("warn: call %d in a row with the same arguments not executed", ru.doomCount)
		ru.emit(ev)
		log.Msg("doom loop: call not executed, model warned")
		return false, orDefault(ru.a.Prompts.DoomWarn, fallbackDoomWarn), false
	case action == DoomAsk && ru.r.Asker != nil:
		switch ru.r.Asker.AskDoomLoop(ctx, ru.a.Name, c, ru.doomCount) {
		case AnswerOnce:
			ev.Message = fmt.Sprintf("ask: continue once (call %d in a row)", ru.doomCount)
			ru.emit(ev)
			log.Msg("doom loop: user let the call run once")
			return true, "", false
		case AnswerAlways:
			ru.doomOff = true
			ev.Message = fmt.Sprintf("ask: continue always (call %d in a row); detection off for this run", ru.doomCount)
			ru.emit(ev)
			log.Msg("doom loop: user turned detection off")
			return true, "", false
		}
		ev.Message = fmt.Sprintf("ask: stop (call %d in a row)", ru.doomCount)
	default:
		ev.Message = fmt.Sprintf("stop: call %d in a row with the same arguments", ru.doomCount)
		if action == DoomWarn {
			ev.Message += " (second doom loop after a warning)"
		}
	}
	ru.emit(ev)
	log.Msg("doom loop: run stops, next request is the final step")
	if ru.final == "" {
		ru.final = StopDoomLoop
	}
	return false, fmt.Sprintf("not executed: this is call %d in a row to %s with the same arguments (doom loop); the run is stopping", ru.doomCount, c.Name), true
}

// canonicalJSON returns s re-marshalled with object keys sorted, or s itself
// when it is not valid JSON.
func canonicalJSON(s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}
