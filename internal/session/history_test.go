package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/loop"
)

// scripted answers each request with the next response; it is the only fake:
// the loop, the session files and History are the real ones.
type scripted struct {
	resps []loop.Response
	n     int
}

func (m *scripted) Stream(_ context.Context, _ loop.Request, _ func(string)) (loop.Response, error) {
	if m.n >= len(m.resps) {
		return loop.Response{}, fmt.Errorf("script exhausted after %d replies", m.n)
	}
	m.n++
	return m.resps[m.n-1], nil
}

// echoTools is a one-tool toolset that answers every call with its arguments.
type echoTools struct{}

func (echoTools) Tools() []loop.ToolSpec {
	return []loop.ToolSpec{{Name: "echo", Description: "echo", InputSchema: []byte(`{"type":"object"}`)}}
}

func (echoTools) Call(_ context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Content: "echo " + c.Arguments}, nil
}

func call(id, arg string, promptTokens int) loop.Response {
	return loop.Response{
		Message:      loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: id, Name: "echo", Arguments: `{"n":"` + arg + `"}`}}},
		FinishReason: "tool_calls",
		Usage:        loop.Usage{PromptTokens: promptTokens},
	}
}

func text(s string) loop.Response {
	return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: s}, FinishReason: "stop"}
}

// runInto runs one agent turn with the session as its sink and returns the
// live history the loop ended with, without the system message.
func runInto(t *testing.T, s *Session, m loop.Model, prompt string, history []loop.Message) []loop.Message {
	t.Helper()
	a := &loop.Agent{Name: "a", ModelID: "m", Model: m, Tools: echoTools{}, Policy: loop.Policy{System: "sys", StepsMax: 10, ContextWindow: 1000}}
	res := (&loop.Runner{Sink: s}).Run(context.Background(), a, loop.Input{Prompt: prompt, History: history})
	if res.StopReason != loop.StopCompleted {
		t.Fatalf("run stopped with %s, errors %v", res.StopReason, res.Errors)
	}
	if len(res.Messages) == 0 || res.Messages[0].Role != loop.RoleSystem {
		t.Fatalf("live history does not start with the system message: %+v", res.Messages)
	}
	return res.Messages[1:]
}

// TestHistoryAppliesCompaction runs the real loop into a session twice, each
// run compacting its history, and checks that History rebuilds exactly the
// history the loop itself ended with, not the uncompacted transcript.
func TestHistoryAppliesCompaction(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	first := &scripted{resps: []loop.Response{
		call("c1", "1", 10),
		call("c2", "2", 10),
		call("c3", "3", 900), // over 85 % of 1000: compact before the next request
		text("summary one"),  // the compaction request
		text("done one"),
	}}
	live := runInto(t, s, first, "task one", nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, err := Events(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := History(evs)
	if d := cmp.Diff(live, got); d != "" {
		t.Fatalf("History after one compaction (-want +got):\n%s", d)
	}
	if got[0].Content != "Summary of earlier conversation: summary one" {
		t.Fatalf("History starts with %+v, want the summary", got[0])
	}

	// Continue the session: the second run starts from History and compacts
	// again, so its counts refer to the already compacted history.
	s, err = Open(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	second := &scripted{resps: []loop.Response{
		call("d1", "4", 10),
		call("d2", "5", 950),
		text("summary two"),
		text("done two"),
	}}
	live = runInto(t, s, second, "task two", got)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, err = Events(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got = History(evs)
	if d := cmp.Diff(live, got); d != "" {
		t.Fatalf("History after a continued compaction (-want +got):\n%s", d)
	}
	if got[0].Content != "Summary of earlier conversation: summary two" {
		t.Fatalf("History starts with %+v, want the second summary", got[0])
	}
}

// TestHistoryCompactionFromOlderWriter: a compaction event without Kept (or
// with a Kept that does not fit) leaves the messages as they were.
func TestHistoryCompactionFromOlderWriter(t *testing.T) {
	sum := loop.Message{Role: loop.RoleUser, Content: "Summary of earlier conversation: x"}
	base := []loop.Event{
		msg(0, loop.Message{Role: loop.RoleUser, Content: "go"}),
		msg(0, loop.Message{Role: loop.RoleAssistant, Content: "ok"}),
	}
	for _, kept := range []int{0, 3, -1} {
		evs := append(base[:2:2], loop.Event{Type: loop.EventCompaction, Kept: kept, Msg: &sum})
		if h := History(evs); len(h) != 2 || h[0].Content != "go" {
			t.Errorf("kept %d: history %+v, want the two messages unchanged", kept, h)
		}
	}
	evs := append(base[:2:2], loop.Event{Type: loop.EventCompaction, Kept: 1, Replaced: 1, Msg: &sum})
	if h := History(evs); len(h) != 2 || h[0].Content != sum.Content || h[1].Content != "ok" {
		t.Errorf("kept 1: history %+v, want summary, ok", h)
	}
}
