package loop

import (
	"context"
	"fmt"
	"strings"
)

// compactionPercent is the share of the context window, in percent, that a
// response's prompt tokens must exceed for the history to be compacted
// before the next request.
const compactionPercent = 85

// compactionKeep is the number of most recent messages compaction keeps
// verbatim (more when that would split a tool-call message from its results).
const compactionKeep = 4

// summaryPrefix starts the user message that replaces compacted history.
const summaryPrefix = "Summary of earlier conversation: "

// needsCompaction is the compaction trigger: a response whose prompt took
// more than 85 % of a context window of window tokens. A window of 0 (not
// known) never triggers.
func needsCompaction(promptTokens, window int) bool {
	return window > 0 && promptTokens*100 > window*compactionPercent
}

// checkWindow warns when req, the run's first request, is larger than the
// model's context window by the usage estimate (EstimateUsage): compaction
// acts on the sizes a server reports after a response, too late for a
// prompt or a continued history that is too large from the start. The
// request is sent all the same: the estimate is rough, and the server
// decides.
func (ru *run) checkWindow(req Request) {
	if ru.a.ContextWindow <= 0 {
		return
	}
	if est := EstimateUsage(req, Response{}).PromptTokens; est > ru.a.ContextWindow {
		ru.log.Warn().Int("estimated_tokens", est).Int("context_window", ru.a.ContextWindow).
			Msg("the request is larger than the model's context_window: the server may refuse or cut it; shorten the prompt, or set context_window to the model's real size")
	}
}

// compactionCut returns how many of the oldest messages of body (the history
// after the system message) compaction replaces: all but the last
// compactionKeep, fewer when that would separate an assistant message from
// its tool results. Below 2 there is nothing worth summarising.
func compactionCut(body []Message) int {
	cut := len(body) - compactionKeep
	for cut > 0 && body[cut].Role == RoleTool {
		cut--
	}
	return cut
}

// compaction replaces the older part of the history with a summary written
// by the model. It returns a stop reason only when the run was aborted; any
// other failure leaves the history as it was.
func (ru *run) compaction(ctx context.Context) StopReason {
	ru.compact = false
	start := 0
	if len(ru.history) > 0 && ru.history[0].Role == RoleSystem {
		start = 1
	}
	body := ru.history[start:]
	cut := compactionCut(body)
	if cut < 2 {
		ru.log.Debug().Int("messages", len(body)).Msg("compaction skipped: too few older messages")
		return ""
	}
	msgs := make([]Message, 0, start+cut+1)
	msgs = append(msgs, ru.history[:start]...)
	msgs = append(msgs, body[:cut]...)
	msgs = append(msgs, Message{Role: RoleUser, Content: orDefault(ru.a.Prompts.Compaction, defaultPrompts.Compaction)})

	resp, failed, err := ru.stream(ctx, Request{Messages: msgs}, false)
	if failed == StopAborted {
		return StopAborted
	}
	if failed != "" {
		ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("compaction: %v", err))
		ru.log.Error().Err(err).Msg("compaction failed: history kept")
		return ""
	}
	usage, _ := ru.account(Request{Messages: msgs}, &resp)
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		ru.log.Warn().Msg("compaction returned no summary: history kept")
		return ""
	}
	sm := Message{Role: RoleUser, Content: summaryPrefix + summary}
	ru.history, _ = ApplyCompaction(ru.history, sm, len(body)-cut)
	ru.log.Info().Int("replaced", cut).Int("kept", len(body)-cut).Msg("history compacted")
	ru.emit(Event{Type: EventCompaction, Step: ru.res.Steps, StepsMax: ru.stepsMax, Usage: &usage, Replaced: cut, Kept: len(body) - cut,
		Message: fmt.Sprintf("%d older messages replaced by a summary; %d recent messages kept", cut, len(body)-cut), Msg: &sm})
	return ""
}

// ApplyCompaction returns history compacted: its system message (when it
// starts with one), then summary, then its last kept messages. It is the
// one rule for the history after a compaction: the run applies it when it
// compacts, and a session's history is rebuilt with it from the compaction
// event (Msg is the summary, Kept the count). A kept below 1 or beyond the
// messages after the system message (an event written by an older version,
// or one that does not fit the history) leaves history as it is, and ok is
// false. history itself is not modified.
func ApplyCompaction(history []Message, summary Message, kept int) (compacted []Message, ok bool) {
	start := 0
	if len(history) > 0 && history[0].Role == RoleSystem {
		start = 1
	}
	if kept < 1 || kept > len(history)-start {
		return history, false
	}
	h := make([]Message, 0, start+1+kept)
	h = append(h, history[:start]...)
	h = append(h, summary)
	h = append(h, history[len(history)-kept:]...)
	return h, true
}
