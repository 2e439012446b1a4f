package session

import "github.com/agenthost/agenthost/loop"

// Summary is what a session's events say about it as a whole: what
// `sessions list` shows of it, and the chat's /usage.
type Summary struct {
	// Prompt is the first top-level user message.
	Prompt string
	// Finished is false when the last top-level run has no run.end (or
	// there is no run): it is still running, or its process was killed
	// (it can be continued either way). Stop, Steps and StepsMax are the
	// last run's when it is true.
	Finished        bool
	Stop            loop.StopReason
	Steps, StepsMax int
	// Runs is the number of finished top-level runs; Usage and Cost are
	// summed over them. CostKnown is false when any of them has no cost
	// (no price).
	Runs      int
	Usage     loop.Usage
	Cost      float64
	CostKnown bool
	// Answered is true once a model answered in a top-level run: false
	// for a session whose runs all ended before any answer (the server
	// down, the key refused), which holds only its prompts.
	Answered bool
}

// FailedEarly reports whether the session's runs all failed before any
// model answer: finished, not Answered, and the last run failed
// (provider_error, error). An aborted one is not: a person stopped it.
func (s Summary) FailedEarly() bool {
	return s.Finished && !s.Answered && s.Stop.ExitClass() == loop.ExitFailed
}

// Summarize sums up a session's events, read from its top-level ones
// (Depth 0): the runs of its subagents are counted in their parent's
// run.end.
func Summarize(evs []loop.Event) Summary {
	s := Summary{CostKnown: true}
	for _, ev := range evs {
		if ev.Depth != 0 {
			continue
		}
		switch {
		case ev.Type == loop.EventRunStart:
			s.Finished = false
		case ev.Type == loop.EventRunEnd && ev.Result != nil:
			s.Finished = true
			s.Stop, s.Steps, s.StepsMax = ev.Result.StopReason, ev.Result.Steps, ev.Result.StepsMax
			s.Runs++
			s.Usage = s.Usage.Add(ev.Result.Usage)
			if ev.Result.Cost == nil {
				s.CostKnown = false
			} else {
				s.Cost += *ev.Result.Cost
			}
		case ev.Type == loop.EventMessage && ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant:
			s.Answered = true
		case s.Prompt == "" && ev.Type == loop.EventMessage && ev.Msg != nil && ev.Msg.Role == loop.RoleUser:
			s.Prompt = ev.Msg.Content
		}
	}
	return s
}

// ListSummaries is what `sessions list` shows: the sessions of dataDir,
// newest first, with their summaries, at most limit of them when limit is
// above 0. Unless all, the sessions that failed before any model answer
// (FailedEarly) are left out, and hidden counts those passed over.
func ListSummaries(dataDir string, limit int, all bool) (ms []Meta, sums []Summary, hidden int, err error) {
	metas, err := List(dataDir)
	if err != nil {
		return nil, nil, 0, err
	}
	for _, m := range metas {
		if limit > 0 && len(ms) == limit {
			break
		}
		_, evs, _ := Events(dataDir, m.ID)
		sum := Summarize(evs)
		if sum.FailedEarly() && !all {
			hidden++
			continue
		}
		ms, sums = append(ms, m), append(sums, sum)
	}
	return ms, sums, hidden, nil
}
