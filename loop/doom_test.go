package loop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// asker answers questions from a list and records them.
type asker struct {
	answers []Verdict
	asked   []string
}

func (a *asker) Decide(ctx context.Context, q Question) Decision {
	if q.Kind == AskDoomLoop {
		a.asked = append(a.asked, fmt.Sprintf("%s %s %d", q.Agent, q.Call.ID, q.Count))
	} else {
		a.asked = append(a.asked, fmt.Sprintf("%s %s %s", q.Agent, q.Call.ID, q.Pattern))
	}
	if len(a.answers) == 0 {
		return Decision{Verdict: Deny, By: "test"}
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return Decision{Verdict: ans, By: "test"}
}

func TestDoomLoop(t *testing.T) {
	same := func(id string) ToolCall { return tc(id, "read_file", `{"a":1,"b":2}`) }
	swapped := func(id string) ToolCall { return tc(id, "read_file", `{"b":2, "a":1}`) }
	tests := []struct {
		name       string
		action     DoomAction
		threshold  int
		asker      *asker
		script     []reply
		wantCalls  []string
		wantStop   StopReason
		wantDoomEv int
		// wantErr maps call ids not executed to a substring of their result.
		wantErr map[string]string
		wantAsk []string
	}{
		{
			name: "warn, then stop on a second loop", action: DoomWarn,
			script: []reply{
				calls("", same("1")), calls("", swapped("2")), calls("", same("3")), // third refused with a warning
				calls("", same("4")), // still identical: second doom loop → stop
				text("doom summary"),
			},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 2,
			wantErr: map[string]string{"3": testPrompts.DoomWarn, "4": "doom loop"},
		},
		{
			name: "warn is the default and a different call resets the count", action: "",
			script: []reply{
				calls("", same("1")), calls("", same("2")), calls("", tc("x", "list_dir", `{}`)),
				calls("", same("3")), calls("", same("4")), text("done"),
			},
			wantCalls: []string{"1", "2", "x", "3", "4"}, wantStop: StopCompleted,
		},
		{
			name: "stop", action: DoomStop,
			script: []reply{
				calls("", same("1"), same("2"), same("3"), tc("4", "list_dir", `{}`)),
				text("stopped"),
			},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"3": "doom loop", "4": "doom loop"},
		},
		{
			name: "threshold 2", action: DoomStop, threshold: 2,
			script:    []reply{calls("", same("1")), calls("", same("2")), text("stopped")},
			wantCalls: []string{"1"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"2": "doom loop"},
		},
		{
			name: "ask without a terminal acts as stop", action: DoomAsk,
			script:    []reply{calls("", same("1"), same("2"), same("3")), text("stopped")},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"3": "doom loop"},
		},
		{
			name: "ask once, then stop", action: DoomAsk, asker: &asker{answers: []Verdict{Allow, Deny}},
			script:    []reply{calls("", same("1"), same("2"), same("3")), calls("", same("4")), text("stopped")},
			wantCalls: []string{"1", "2", "3"}, wantStop: StopDoomLoop, wantDoomEv: 2,
			wantErr: map[string]string{"4": "doom loop"},
			wantAsk: []string{"main 3 3", "main 4 4"},
		},
		{
			name: "ask always disables detection", action: DoomAsk, asker: &asker{answers: []Verdict{AllowAlways}},
			script:    []reply{calls("", same("1"), same("2"), same("3")), calls("", same("4"), same("5")), text("done")},
			wantCalls: []string{"1", "2", "3", "4", "5"}, wantStop: StopCompleted, wantDoomEv: 1,
			wantAsk: []string{"main 3 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			ts := newTools("read_file", "list_dir")
			a := testAgent(m, ts, 10)
			a.DoomAction, a.DoomThreshold = tt.action, tt.threshold
			r, rec, _ := testRunner()
			if tt.asker != nil {
				r.Approver = tt.asker
			}
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			want := slices.Clone(tt.wantCalls)
			slices.Sort(want)
			if diff := cmp.Diff(want, ts.calledSorted()); diff != "" {
				t.Errorf("executed calls (-want +got):\n%s", diff)
			}
			if res.StopReason != tt.wantStop {
				t.Errorf("stop %s, want %s", res.StopReason, tt.wantStop)
			}
			if n := len(rec.of(EventDoomLoop)); n != tt.wantDoomEv {
				t.Errorf("%d doom_loop events, want %d", n, tt.wantDoomEv)
			}
			for _, tm := range toolMsgs(res.Messages) {
				want, refused := tt.wantErr[tm.ToolCallID]
				if refused != tm.IsError || refused && !strings.Contains(tm.Content, want) {
					t.Errorf("tool message %s = %q (error %v); want refused %v with %q", tm.ToolCallID, tm.Content, tm.IsError, refused, want)
				}
			}
			if tt.wantStop == StopDoomLoop {
				lr := m.reqs[len(m.reqs)-1]
				if last(lr.Messages).Content != testPrompts.DoomLoop || lr.Tools != nil {
					t.Errorf("final request ends with %+v, tools %v; want the doom-loop prompt and no tools", last(lr.Messages), toolNames(lr.Tools))
				}
			}
			if tt.asker != nil {
				if diff := cmp.Diff(tt.wantAsk, tt.asker.asked); diff != "" {
					t.Errorf("questions asked (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ a, b string }{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{`{"a":{"y":[1,2],"x":null}}`, ` { "a" : { "x":null, "y":[1, 2] } } `},
		{`{"n":1.50}`, `{"n":1.50}`},
	}
	for _, tt := range tests {
		if ca, cb := canonicalJSON(tt.a), canonicalJSON(tt.b); ca != cb {
			t.Errorf("canonicalJSON(%s) = %s, canonicalJSON(%s) = %s; want equal", tt.a, ca, tt.b, cb)
		}
	}
	if canonicalJSON(`{"n":1}`) == canonicalJSON(`{"n":2}`) {
		t.Error("different values share a signature")
	}
	if got := canonicalJSON(`{not json`); got != `{not json` {
		t.Errorf("invalid JSON canonicalised to %q, want the raw text", got)
	}
	if got := canonicalJSON(`{} {}`); got != `{} {}` {
		t.Errorf("trailing data canonicalised to %q, want the raw text", got)
	}
}

// verdictNames name doom verdicts in test traces.
var verdictNames = map[doomVerdict]string{verdictWarn: "warn", verdictStop: "stop", verdictOnce: "once", verdictAlways: "always"}

// doomTrace feeds calls to a detector and returns one line per call: the
// count of identical calls in a row, then, for a call that completes a doom
// loop, the verdict and the event note. answers are given, in order, when the
// detector asks (nil: no terminal).
func doomTrace(d doomDetector, answers []Verdict, calls ...ToolCall) (trace []string, asked int) {
	var ask func() Verdict
	if answers != nil {
		ask = func() Verdict {
			asked++
			if len(answers) == 0 {
				return Deny
			}
			a := answers[0]
			answers = answers[1:]
			return a
		}
	}
	for _, c := range calls {
		if !d.observe(c, canonicalJSON(c.Arguments)) {
			trace = append(trace, fmt.Sprint(d.count))
			continue
		}
		v, note := d.decide(ask)
		trace = append(trace, fmt.Sprintf("%d %s: %s", d.count, verdictNames[v], note))
	}
	return trace, asked
}

func TestDoomDetector(t *testing.T) {
	read := func(args string) ToolCall { return tc("x", "read_file", args) }
	ab, ba := read(`{"a":1,"b":2}`), read(`{ "b": 2, "a": 1 }`)
	tests := []struct {
		name      string
		threshold int
		action    DoomAction
		answers   []Verdict // nil: no asker
		calls     []ToolCall
		want      []string
		wantAsked int
	}{
		{
			name: "keys in any order are the same call; threshold 0 means 3", action: DoomStop,
			calls: []ToolCall{ab, ba, ab, ba},
			want: []string{"1", "2",
				"3 stop: stop: call 3 in a row with the same arguments",
				"4 stop: stop: call 4 in a row with the same arguments"},
		},
		{
			name: "other arguments or another tool reset the count", threshold: 2, action: DoomStop,
			calls: []ToolCall{ab, read(`{"a":2,"b":2}`), ab, tc("y", "list_dir", `{"a":1,"b":2}`), ab, ba},
			want:  []string{"1", "1", "1", "1", "1", "2 stop: stop: call 2 in a row with the same arguments"},
		},
		{
			name: "arguments that are not JSON compare as text", threshold: 2, action: DoomStop,
			calls: []ToolCall{read(`{"a":`), read(`{"a": `), read(`{"a": `)},
			want:  []string{"1", "1", "2 stop: stop: call 2 in a row with the same arguments"},
		},
		{
			name: "warn is the default, then stop", threshold: 2,
			calls: []ToolCall{ab, ab, ab, read(`{}`), read(`{}`)},
			want: []string{"1",
				"2 warn: warn: call 2 in a row with the same arguments not executed",
				"3 stop: stop: call 3 in a row with the same arguments (second doom loop after a warning)",
				"1",
				"2 stop: stop: call 2 in a row with the same arguments (second doom loop after a warning)"},
		},
		{
			name: "ask without a terminal stops", threshold: 2, action: DoomAsk,
			calls: []ToolCall{ab, ab},
			want:  []string{"1", "2 stop: stop: call 2 in a row with the same arguments"},
		},
		{
			name: "ask once asks again on the next identical call", threshold: 2, action: DoomAsk,
			answers: []Verdict{Allow, Deny},
			calls:   []ToolCall{ab, ab, ab},
			want: []string{"1",
				"2 once: ask: continue once (call 2 in a row)",
				"3 stop: ask: stop (call 3 in a row)"},
			wantAsked: 2,
		},
		{
			name: "ask always turns detection off for good", threshold: 2, action: DoomAsk,
			answers: []Verdict{AllowAlways},
			calls:   []ToolCall{ab, ab, ab, read(`{}`), read(`{}`), read(`{}`)},
			want: []string{"1",
				"2 always: ask: continue always (call 2 in a row); detection off for this run",
				"3", "1", "2", "3"},
			wantAsked: 1,
		},
		{
			name: "an unknown action stops", threshold: 2, action: "bogus",
			calls: []ToolCall{ab, ab},
			want:  []string{"1", "2 stop: stop: call 2 in a row with the same arguments"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, asked := doomTrace(newDoomDetector(tt.threshold, tt.action), tt.answers, tt.calls...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("trace (-want +got):\n%s", diff)
			}
			if asked != tt.wantAsked {
				t.Errorf("asked %d times, want %d", asked, tt.wantAsked)
			}
		})
	}
}

func TestDoomSignature(t *testing.T) {
	if sig(tc("1", "a", `{"x":1}`)) == sig(tc("2", "b", `{"x":1}`)) {
		t.Error("calls to different tools share a signature")
	}
	if sig(tc("1", "a", `{"x":1,"y":2}`)) != sig(tc("2", "a", `{"y":2,"x":1}`)) {
		t.Error("the call id or the key order changes the signature")
	}
	// The name ends where the arguments start: "ab"+"c" is not "a"+"bc".
	if sig(tc("1", "ab", "c")) == sig(tc("1", "a", "bc")) {
		t.Error("name and arguments run together in the signature")
	}
}

// canonicalJSON is the canonical form of arguments s as the run reads them.
func canonicalJSON(s string) string { return readArguments(ToolCall{Arguments: s}).canon }

// sig is the doom-loop signature of call c.
func sig(c ToolCall) string { return doomSignature(c.Name, canonicalJSON(c.Arguments)) }
