package loop

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/internal/defaults"
)

// DoomAction is what the loop does about a doom loop: the same tool call,
// with the same arguments, made Agent.DoomThreshold times in a row.
type DoomAction string

const (
	// DoomWarn (the default) refuses the repeated call with Prompts.DoomWarn
	// as its error result; a second doom loop in the run acts as DoomStop.
	DoomWarn DoomAction = "warn"
	// DoomStop refuses the call and makes the next request the final step.
	DoomStop DoomAction = "stop"
	// DoomAsk lets Runner.Approver decide (an AskDoomLoop question):
	// Allow runs the call once, AllowAlways runs it and turns detection
	// off for the run, Deny stops; without an Approver it acts as
	// DoomStop.
	DoomAsk DoomAction = "ask"
)

// doomDetector finds doom loops in the calls of one run. It counts identical
// consecutive calls across steps; two calls are identical when their names
// and canonical arguments (doomSignature) are equal.
type doomDetector struct {
	threshold int
	action    DoomAction
	sig       string // signature of the last call seen
	count     int    // identical calls in a row, the last one included
	off       bool   // AllowAlways given: detection is off for the run
	warned    bool   // a DoomWarn warning was given: the next loop stops
}

// doomVerdict is what happens to the call that completed a doom loop.
type doomVerdict int

const (
	verdictWarn   doomVerdict = iota // refused with a warning; the run goes on
	verdictStop                      // refused; the next request is the final step
	verdictOnce                      // the user let it run once (DoomAsk)
	verdictAlways                    // it runs and detection is off for the run (DoomAsk)
)

// newDoomDetector returns a detector for threshold identical calls (0 means
// defaults.DoomThreshold) and action ("" means defaults.DoomAction; an
// unknown action acts as DoomStop).
func newDoomDetector(threshold int, action DoomAction) doomDetector {
	threshold = defaults.Or(threshold, defaults.DoomThreshold)
	if action == "" {
		action = defaults.DoomAction
	}
	return doomDetector{threshold: threshold, action: action}
}

// observe records call c, whose canonical arguments are canon
// (canonicalJSON), and reports whether it completes a doom loop: the
// threshold-th (or a later) identical call in a row, while detection is on.
func (d *doomDetector) observe(c ToolCall, canon string) bool {
	sig := doomSignature(c.Name, canon)
	if sig == d.sig {
		d.count++
	} else {
		d.sig, d.count = sig, 1
	}
	return !d.off && d.count >= d.threshold
}

// decide escalates the doom loop observe just reported and returns the
// verdict with a note for the doom_loop event. Under DoomWarn the first loop
// warns and any later one stops; under DoomAsk, ask (nil without an
// Approver, which stops) answers, and AllowAlways turns detection off for
// the run; any other action stops.
func (d *doomDetector) decide(ask func() Verdict) (doomVerdict, string) {
	switch {
	case d.action == DoomWarn && !d.warned:
		d.warned = true
		return verdictWarn, fmt.Sprintf("warn: call %d in a row with the same arguments not executed", d.count)
	case d.action == DoomAsk && ask != nil:
		switch ask() {
		case Allow:
			return verdictOnce, fmt.Sprintf("ask: continue once (call %d in a row)", d.count)
		case AllowAlways:
			d.off = true
			return verdictAlways, fmt.Sprintf("ask: continue always (call %d in a row); detection off for this run", d.count)
		}
		return verdictStop, fmt.Sprintf("ask: stop (call %d in a row)", d.count)
	case d.action == DoomWarn:
		return verdictStop, fmt.Sprintf("stop: call %d in a row with the same arguments (second doom loop after a warning)", d.count)
	}
	return verdictStop, fmt.Sprintf("stop: call %d in a row with the same arguments", d.count)
}

// checkDoom runs call c, whose canonical arguments are canon, through the
// doom-loop detector. It says whether c
// may run and, when not, the error result to give it and whether the run is
// stopping. Every verdict emits doom_loop.
func (ru *run) checkDoom(ctx context.Context, c ToolCall, canon string) (run bool, content string, stop bool) {
	d := &ru.doom
	if !d.observe(c, canon) {
		return true, "", false
	}
	var ask func() Verdict
	if d.action == DoomAsk && ru.r.Approver != nil {
		ask = func() Verdict {
			why := fmt.Sprintf("doom loop: call %d in a row with the same arguments", d.count)
			return ru.ask(ctx, Question{Kind: AskDoomLoop, Call: c, Count: d.count}, why).Verdict
		}
	}
	verdict, note := d.decide(ask)
	ru.emit(Event{Type: EventDoomLoop, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments, Message: note})
	log := ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Int("count", d.count).Str("action", string(d.action))
	switch verdict {
	case verdictWarn:
		log.Msg(LogDoomLoop + ": call not executed, model warned")
		return false, orDefault(ru.a.Prompts.DoomWarn, defaultPrompts.DoomWarn), false
	case verdictOnce:
		log.Msg(LogDoomLoop + ": user let the call run once")
		return true, "", false
	case verdictAlways:
		log.Msg(LogDoomLoop + ": user turned detection off")
		return true, "", false
	}
	log.Msg(LogDoomLoop + ": run stops, next request is the final step")
	if ru.final == "" {
		ru.final = StopDoomLoop
	}
	return false, fmt.Sprintf("not executed: this is call %d in a row to %s with the same arguments (doom loop); the run is stopping", d.count, c.Name), true
}

// doomStopping is the error result of the calls that follow, in the same
// response, a call that stopped the run as a doom loop.
func doomStopping(c ToolCall) string {
	return fmt.Sprintf("not executed: the run is stopping because the tool call %s was repeated (doom loop)", c.Name)
}

// doomSignature identifies a call for doom-loop detection: its name and
// its canonical arguments (arguments.canon: re-marshalled with object keys
// sorted).
func doomSignature(name, canon string) string {
	return name + "\x00" + canon
}
