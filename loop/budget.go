package loop

import "fmt"

// budgetSpent says whether the tool-call budget is used up; never when it is
// unlimited (Agent.Budget 0).
func (ru *run) budgetSpent() bool {
	return ru.a.Budget > 0 && ru.used >= ru.a.Budget
}

// budgetRefusal is the error result for call c once the budget is spent; the
// calls after it in the same response get the same answer.
func (ru *run) budgetRefusal(c ToolCall) string {
	ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Int("budget", ru.a.Budget).Msg("tool budget exhausted: call refused")
	return fmt.Sprintf("tool budget exhausted: call not executed (%d of %d tool calls used)", ru.used, ru.a.Budget)
}

// checkBudget runs after the calls of a response: the first time the budget
// is spent it emits budget.exhausted and makes the next request the final
// step (unless a doom-loop stop already did).
func (ru *run) checkBudget() {
	if !ru.budgetSpent() || ru.budgetEmitted {
		return
	}
	ru.budgetEmitted = true
	ru.log.Warn().Int("budget", ru.a.Budget).Int("used", ru.used).Msg("tool budget exhausted: next request is the final step")
	ru.emit(Event{Type: EventBudgetExhausted, Step: ru.res.Steps, StepsMax: ru.stepsMax,
		Message: fmt.Sprintf("%d of %d tool calls used", ru.used, ru.a.Budget)})
	if ru.final == "" {
		ru.final = StopBudget
	}
}
