package loop

import "fmt"

// StopReason says why a run ended. The stops table below describes each
// one; front ends read it through the methods (IsLimit, ExitClass,
// EndsWithAnswer, Broken) instead of listing reasons themselves.
type StopReason string

const (
	StopCompleted     StopReason = "completed"
	StopMaxSteps      StopReason = "max_steps"
	StopBudget        StopReason = "budget"
	StopDoomLoop      StopReason = "doom_loop"
	StopTokenLimit    StopReason = "token_limit"
	StopCostLimit     StopReason = "cost_limit"
	StopAborted       StopReason = "aborted"
	StopProviderError StopReason = "provider_error"
	StopError         StopReason = "error"
	// StopInvalidOutput: the final answer did not satisfy
	// Policy.OutputSchema, even after a repair request (output.go).
	StopInvalidOutput StopReason = "invalid_output"
)

// ExitClass is how a front end reports a stop reason: agenthost run's exit
// code (docs/cli.md, "Exit codes") is one per class.
type ExitClass int

const (
	// ExitFailed: the run failed (provider_error, error, invalid_output,
	// and any reason the table does not know).
	ExitFailed ExitClass = iota
	// ExitCompleted: the run completed.
	ExitCompleted
	// ExitLimit: a limit stopped the run, after its final step (the
	// summary the limit's prompt asks for).
	ExitLimit
	// ExitAborted: the run was cancelled.
	ExitAborted
)

// stop describes one stop reason. broken says the run broke off: no
// answer of the model ended it (a subagent's tool result is then an
// error, a trace's span fails). A limit (class ExitLimit) ends the run
// with a final step: prompt picks the agent's text that opens it from a
// prompt set (blank: the default's), and sentinel says what stopped the
// run, for the answer the host writes when the model gives no text. A
// limit looked at before each step has a check (finalStep): it returns
// the reason that makes the step final and why, for the log ("" when
// none, or when the log needs no line); the others are set during a step
// (run.final: the budget, the doom loop).
type stop struct {
	reason   StopReason
	class    ExitClass
	broken   bool
	check    func(ru *run, step int) (StopReason, string)
	prompt   func(*Prompts) string
	sentinel func(ru *run) string
}

// stops is the one description of the stop reasons. Adding a limit is a
// row here (its check, or a tool call's setting run.final as the budget
// does; its prompt in package prompts) and a Policy field.
var stops = []stop{
	{reason: StopCompleted, class: ExitCompleted},
	{reason: StopBudget, class: ExitLimit,
		prompt: func(p *Prompts) string { return p.Budget },
		sentinel: func(ru *run) string {
			return fmt.Sprintf("tool-call budget exhausted (%d of %d calls)", ru.used, ru.a.Budget)
		}},
	{reason: StopDoomLoop, class: ExitLimit,
		prompt: func(p *Prompts) string { return p.DoomLoop },
		sentinel: func(*run) string {
			return "doom loop (the same tool call repeated with the same arguments)"
		}},
	// The checks run in table order: the spend limits before the step cap.
	{reason: StopTokenLimit, class: ExitLimit,
		// one check for both spend limits: whichever of this run's and its
		// parents' limits the next request could pass first (spendLimit)
		check:  (*run).spendCheck,
		prompt: func(p *Prompts) string { return p.Tokens },
		sentinel: func(ru *run) string {
			return fmt.Sprintf("token limit reached (%d tokens used)", ru.res.Usage.TotalTokens)
		}},
	{reason: StopCostLimit, class: ExitLimit,
		prompt: func(p *Prompts) string { return p.Cost },
		sentinel: func(ru *run) string {
			if c := ru.runCost(); c != nil {
				return fmt.Sprintf("cost limit reached ($%s used)", USD(*c))
			}
			return "cost limit reached"
		}},
	{reason: StopMaxSteps, class: ExitLimit,
		check: func(ru *run, step int) (StopReason, string) {
			if step >= ru.stepsMax {
				return StopMaxSteps, ""
			}
			return "", ""
		},
		prompt: func(p *Prompts) string { return p.MaxSteps },
		sentinel: func(ru *run) string {
			return fmt.Sprintf("step limit reached (%d of %d steps)", ru.res.Steps, ru.stepsMax)
		}},
	{reason: StopAborted, class: ExitAborted, broken: true},
	{reason: StopProviderError, class: ExitFailed, broken: true},
	{reason: StopError, class: ExitFailed, broken: true},
	{reason: StopInvalidOutput, class: ExitFailed},
}

// lookup is r's row; a reason the table lacks is a failure.
func (r StopReason) lookup() stop {
	for _, s := range stops {
		if s.reason == r {
			return s
		}
	}
	return stop{reason: r, class: ExitFailed, broken: true}
}

// IsLimit says whether r is a limit: the run ended with a final step
// asking for a summary (max_steps, budget, doom_loop, token_limit,
// cost_limit).
func (r StopReason) IsLimit() bool { return r.lookup().class == ExitLimit }

// ExitClass is how front ends report r.
func (r StopReason) ExitClass() ExitClass { return r.lookup().class }

// EndsWithAnswer says whether a run that ended with r gave an answer: it
// completed, or a limit stopped it after its final summary.
func (r StopReason) EndsWithAnswer() bool {
	c := r.ExitClass()
	return c == ExitCompleted || c == ExitLimit
}

// Broken says whether a run that ended with r broke off before an answer
// of the model ended it (provider_error, error, aborted): unlike
// invalid_output, which ends with the model's answer, only not the one
// the schema asks for.
func (r StopReason) Broken() bool { return r.lookup().broken }

// StopReasons lists the stop reasons the loop gives, in the table's order.
func StopReasons() []StopReason {
	out := make([]StopReason, len(stops))
	for i, s := range stops {
		out[i] = s.reason
	}
	return out
}
