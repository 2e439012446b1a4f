package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompaction(t *testing.T) {
	big := func(r reply) reply { r.resp.Usage.PromptTokens = 900; return r }
	m := &fakeModel{script: []reply{
		calls("step one", tc("1", "read_file", `{"n":1}`)),
		calls("step two", tc("2", "read_file", `{"n":2}`)),
		big(calls("", tc("3", "read_file", `{"n":3}`), tc("4", "read_file", `{"n":4}`))),
		text("the summary of it all"), // compaction request
		text("done"),
	}}
	ts := newTools("read_file")
	a := testAgent(m, ts, 10)
	a.ContextWindow = 1000
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.Steps != 4 || res.Output != "done" {
		t.Errorf("got %s steps %d %q; want completed 4 done (compaction is not a step)", res.StopReason, res.Steps, res.Output)
	}
	if len(m.reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(m.reqs))
	}
	cr := m.reqs[3]
	if cr.Tools != nil || last(cr.Messages).Content != testPrompts.Compaction || cr.Messages[0].Role != RoleSystem {
		t.Errorf("compaction request: tools %v, messages %s", toolNames(cr.Tools), dump(cr.Messages))
	}
	// History before compaction: sys, user, a1, t1, a2, t2, a3 (2 calls), t3, t4.
	// Keeping the last 4 (t2, a3, t3, t4) would split a2 from its result t2,
	// so a2 onwards is kept and user, a1, t1 are summarised.
	if len(cr.Messages) != 1+3+1 || cr.Messages[3].ToolCallID != "1" {
		t.Errorf("compaction request has %d messages, want sys, user, a1, t1, prompt: %s", len(cr.Messages), dump(cr.Messages))
	}
	next := m.reqs[4].Messages
	if len(next) != 7 || next[0].Role != RoleSystem || next[1].Role != RoleUser ||
		next[1].Content != "Summary of earlier conversation: the summary of it all" ||
		next[2].Content != "step two" || len(next[4].ToolCalls) != 2 {
		t.Errorf("request after compaction: %s", dump(next))
	}
	ev := rec.of(EventCompaction)
	if len(ev) != 1 || ev[0].Msg == nil || ev[0].Msg.Content != next[1].Content || ev[0].Usage == nil ||
		ev[0].Replaced != 3 || ev[0].Kept != 5 {
		t.Errorf("compaction events %+v; want replaced 3 (user, a1, t1), kept 5", ev)
	}
	if res.Usage.TotalTokens != 5*12 {
		t.Errorf("usage %+v, want the compaction request included (60 total tokens)", res.Usage)
	}
}

func TestCompactionFailureKeepsHistory(t *testing.T) {
	big := func(r reply) reply { r.resp.Usage.PromptTokens = 900; return r }
	m := &fakeModel{script: []reply{
		calls("", tc("1", "read_file", `{"n":1}`)),
		calls("", tc("2", "read_file", `{"n":2}`)),
		big(calls("", tc("3", "read_file", `{"n":3}`))),
		failure(400, false, 0), // compaction fails
		text("done"),
	}}
	a := testAgent(m, newTools("read_file"), 10)
	a.ContextWindow = 1000
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "compaction") {
		t.Errorf("got %s errors %q", res.StopReason, res.Errors)
	}
	if got := len(m.reqs[4].Messages); got != 8 {
		t.Errorf("request after failed compaction has %d messages, want the full 8", got)
	}
}

func TestNeedsCompaction(t *testing.T) {
	tests := []struct {
		prompt, window int
		want           bool
	}{
		{850, 1000, false}, // exactly 85 %: not above
		{851, 1000, true},
		{1, 1, true},
		{0, 1000, false},
		{1 << 20, 0, false}, // unknown window: never
		{128_000, 131_072, true},
		{111_411, 131_072, false}, // 85 % of 131072 is 111411.2
		{111_412, 131_072, true},
	}
	for _, tt := range tests {
		if got := needsCompaction(tt.prompt, tt.window); got != tt.want {
			t.Errorf("needsCompaction(%d, %d) = %v, want %v", tt.prompt, tt.window, got, tt.want)
		}
	}
}

func TestCompactionCut(t *testing.T) {
	// roles spells a history body: u user, a assistant, t tool.
	body := func(roles string) []Message {
		m := map[rune]Role{'u': RoleUser, 'a': RoleAssistant, 't': RoleTool}
		var out []Message
		for _, r := range roles {
			out = append(out, Message{Role: m[r]})
		}
		return out
	}
	tests := []struct {
		roles string
		want  int
	}{
		{"uaua", 0},      // nothing older than the last four
		{"uauaua", 2},    // u a | u a u a
		{"uatatat", 3},   // u a t | a t a t
		{"uatatatt", 3},  // keeping t a t t would split a t: u a t | a t a t t
		{"uattttt", 1},   // the kept part grows back to the assistant message
		{"u", -3},        // negative: too few messages
		{"uatuatuat", 4}, // keeping t u a t would split a t: u a t u | a t u a t
	}
	for _, tt := range tests {
		if got := compactionCut(body(tt.roles)); got != tt.want {
			t.Errorf("compactionCut(%s) = %d, want %d", tt.roles, got, tt.want)
		}
	}
}

// TestApplyCompaction: the system message stays first, the summary follows,
// then the last kept messages; a kept that does not fit changes nothing.
func TestApplyCompaction(t *testing.T) {
	sys := Message{Role: RoleSystem, Content: "sys"}
	sum := Message{Role: RoleUser, Content: summaryPrefix + "s"}
	u := func(s string) Message { return Message{Role: RoleUser, Content: s} }
	body := []Message{u("1"), u("2"), u("3"), u("4")}
	withSys := append([]Message{sys}, body...)
	for _, tc := range []struct {
		name    string
		history []Message
		kept    int
		want    []Message
		ok      bool
	}{
		{"with system", withSys, 2, []Message{sys, sum, u("3"), u("4")}, true},
		{"without system (a session's history)", body, 3, []Message{sum, u("2"), u("3"), u("4")}, true},
		{"everything kept", withSys, 4, []Message{sys, sum, u("1"), u("2"), u("3"), u("4")}, true},
		{"kept 0 (an older event)", withSys, 0, withSys, false},
		{"kept beyond the history", withSys, 5, withSys, false},
		{"empty", nil, 1, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]Message(nil), tc.history...)
			got, ok := ApplyCompaction(tc.history, sum, tc.kept)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.ok {
				t.Errorf("ok %v (want %v), history (-want +got):\n%s", ok, tc.ok, diff)
			}
			if diff := cmp.Diff(before, tc.history); diff != "" {
				t.Errorf("the input was modified (-before +after):\n%s", diff)
			}
		})
	}
}
