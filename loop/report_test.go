package loop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

// TestCutReportData: a log message's data stays JSON of at most
// MaxReportData bytes whatever it is: long strings (escaped ones too), long
// objects, bytes that are not JSON.
func TestCutReportData(t *testing.T) {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	for name, in := range map[string]json.RawMessage{
		"short":   json.RawMessage(`{"a":1}`),
		"long":    str(strings.Repeat("x", 10000)),
		"escaped": str(strings.Repeat("\"<\x01", 5000)),
		"runes":   str(strings.Repeat("é", 5000)),
		"object":  json.RawMessage(`{"a":"` + strings.Repeat("y", 9000) + `"}`),
		"invalid": json.RawMessage("not json \xff"),
	} {
		out := CutReportData(in)
		if len(out) > MaxReportData || !json.Valid(out) || !utf8.Valid(out) {
			t.Errorf("%s: %d bytes, valid JSON %v: %.80s", name, len(out), json.Valid(out), out)
		}
		if name == "short" && string(out) != string(in) {
			t.Errorf("short: %s, want it unchanged", out)
		}
		if name == "long" && !strings.HasSuffix(string(out), `…"`) {
			t.Errorf("long: %.40s… does not say it was cut", out)
		}
	}
}

// oneAtATime is a Sink that fails the test when Emit is called while
// another Emit runs.
type oneAtATime struct {
	t    *testing.T
	in   atomic.Int32
	next Sink
}

func (s *oneAtATime) Emit(e Event) {
	if s.in.Add(1) != 1 {
		s.t.Errorf("Emit of %s while another Emit runs", e.Type)
	}
	s.next.Emit(e)
	s.in.Add(-1)
}

// TestCallReport: what a Toolset reports while a call runs becomes
// tool.progress and tool.log events of that call, between its tool.start
// and tool.end, one Emit at a time, whether the call runs alone or beside
// others; past the bounds the reports are dropped and tool.end counts them;
// a report after the call ended goes nowhere (and does not block).
func TestCallReport(t *testing.T) {
	ts := newTools("work", "chatty")
	var late CallReport
	ts.fn["work"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
		rp := CallReportFrom(ctx)
		rp.Progress(1, 2, "halfway")
		rp.Log("warning", "worker", json.RawMessage(`{"done":true}`))
		late = rp
		return ToolResult{Content: "ok"}, nil
	}
	ts.fn["chatty"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
		rp := CallReportFrom(ctx)
		var wg sync.WaitGroup
		for g := range 3 { // from several goroutines at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					rp.Progress(float64(g*50+i), 0, "")
					rp.Log("info", "", json.RawMessage(`"x"`))
				}
			}()
		}
		wg.Wait()
		return ToolResult{Content: "ok"}, nil
	}
	m := &fakeModel{script: []reply{
		calls("", tc("a", "work", "{}")),
		calls("", tc("b", "chatty", "{}"), tc("c", "work", "{}"), tc("d", "chatty", "{}")),
		text("done"),
	}}
	r, rec, _ := testRunner()
	r.Sink = &oneAtATime{t: t, next: rec}
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "go"})
	if res.StopReason != StopCompleted {
		t.Fatalf("stop reason %s: %v", res.StopReason, res.Errors)
	}
	late.Progress(9, 9, "after the end")
	late.Log("info", "", json.RawMessage(`"after the end"`))

	count := map[string]int{}
	state := map[string]string{} // call id: the last of start, report, end
	for _, e := range rec.events {
		switch e.Type {
		case EventToolStart:
			state[e.CallID] = "start"
		case EventToolProgress, EventToolLog:
			if state[e.CallID] != "start" {
				t.Errorf("%s of call %s outside its tool.start and tool.end", e.Type, e.CallID)
			}
			count[e.CallID+" "+e.Type]++
		case EventToolEnd:
			state[e.CallID] = "end"
			want := ""
			if e.Tool == "chatty" {
				want = "dropped 50 progress and 50 log reports past the limits (100 and 100 a call)"
			}
			if e.Message != want {
				t.Errorf("tool.end of %s: message %q, want %q", e.CallID, e.Message, want)
			}
		}
	}
	for _, id := range []string{"b", "d"} {
		if count[id+" tool.progress"] != MaxReportProgress || count[id+" tool.log"] != MaxReportLogs {
			t.Errorf("call %s: %d progress and %d log events, want %d and %d", id, count[id+" tool.progress"], count[id+" tool.log"], MaxReportProgress, MaxReportLogs)
		}
	}
	for _, id := range []string{"a", "c"} {
		if count[id+" tool.progress"] != 1 || count[id+" tool.log"] != 1 {
			t.Errorf("call %s: %d progress and %d log events, want 1 and 1", id, count[id+" tool.progress"], count[id+" tool.log"])
		}
	}
	p := rec.of(EventToolProgress)[0]
	if p.CallID != "a" || p.Tool != "work" || p.Step != 1 || *p.Progress != 1 || *p.Total != 2 || p.Message != "halfway" {
		t.Errorf("first tool.progress: %+v", p)
	}
	l := rec.of(EventToolLog)[0]
	if l.CallID != "a" || l.Level != "warning" || l.Logger != "worker" || string(l.Data) != `{"done":true}` {
		t.Errorf("first tool.log: %+v", l)
	}
	if n := len(rec.of(EventToolProgress)); n != 2*MaxReportProgress+2 {
		t.Errorf("%d tool.progress events in all, want %d (none after the end)", n, 2*MaxReportProgress+2)
	}
}
