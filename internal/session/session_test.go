package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

func msg(depth int, m loop.Message) loop.Event {
	return loop.Event{Type: loop.EventMessage, Agent: "a", Depth: depth, Msg: &m}
}

func TestCreateEmitReadBack(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "build"})
	if err != nil {
		t.Fatal(err)
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleSystem, Content: "sys"}))
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "hi"}))
	s.Emit(msg(1, loop.Message{Role: loop.RoleUser, Content: "child"}))
	s.Emit(loop.Event{Type: loop.EventRunEnd, Result: &loop.Result{StopReason: loop.StopCompleted, Steps: 1, StepsMax: 3}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	m, evs, err := Events(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Agent != "build" || len(evs) != 4 {
		t.Fatalf("meta %+v, %d events; want agent build, 4 events", m, len(evs))
	}
	h := History(evs)
	if len(h) != 1 || h[0].Content != "hi" {
		t.Fatalf("history = %+v, want only the top-level user message", h)
	}
	ms, err := List(dir)
	if err != nil || len(ms) != 1 || ms[0].ID != s.ID {
		t.Fatalf("List = %+v, %v", ms, err)
	}
}

func TestTornLastLineIsSkipped(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a", ID: "x1"})
	if err != nil {
		t.Fatal(err)
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "kept"}))
	s.Close()
	f, err := os.OpenFile(filepath.Join(dir, "sessions", "x1", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","msg":{"role":"assi`)
	f.Close()
	_, evs, err := Events(dir, "x1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Msg.Content != "kept" {
		t.Fatalf("events = %+v, want the one complete event", evs)
	}
}

func TestHistoryAnswersUnansweredCalls(t *testing.T) {
	evs := []loop.Event{
		msg(0, loop.Message{Role: loop.RoleUser, Content: "go"}),
		msg(0, loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b"}}}),
		msg(0, loop.Message{Role: loop.RoleTool, ToolCallID: "c1", Content: "ok"}),
	}
	h := History(evs)
	if len(h) != 4 {
		t.Fatalf("history has %d messages, want 4: %+v", len(h), h)
	}
	if h[3].ToolCallID != "c2" || !h[3].IsError {
		t.Fatalf("last message = %+v, want an aborted error result for c2", h[3])
	}
}

func TestOpenUnknownAndBadIDs(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, "nope"); err == nil {
		t.Fatal("Open of a missing session succeeded")
	}
	for _, id := range []string{"../x", "a/b", ""} {
		if _, err := Create(dir, Meta{ID: id + "/"}); err == nil {
			t.Fatalf("Create accepted id %q", id+"/")
		}
		if _, err := Open(dir, id); err == nil {
			t.Fatalf("Open accepted id %q", id)
		}
		if _, _, err := Events(dir, id); err == nil {
			t.Fatalf("Events accepted id %q", id)
		}
	}
	if id := NewID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); !validID(id) || id[:15] != "20260102-030405" {
		t.Fatalf("NewID = %q", id)
	}
}

// TestLockOneRunAtATime: while a session is open (created or continued) a
// second Open fails with ErrBusy naming this process; Close releases it.
func TestLockOneRunAtATime(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a", ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, "s1")
	var busy *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &busy) {
		t.Fatalf("Open while created: %v, want ErrBusy", err)
	}
	if busy.Holder == nil || busy.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("busy error %q names holder %+v, want this process", err, busy.Holder)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, "s1")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, err := Open(dir, "s1"); !errors.Is(err, ErrBusy) {
		t.Errorf("second Open: %v, want ErrBusy", err)
	}
	s2.Close()
	s3, err := Open(dir, "s1")
	if err != nil {
		t.Fatalf("Open after the second Close: %v", err)
	}
	s3.Close()
}

// TestEmitStoresWireForm: each stored line is exactly json.Marshal of the
// event (Emit calls MarshalJSON directly; its output must need no second
// pass): HTML characters escaped, no insignificant space, for every kind
// of event.
func TestEmitStoresWireForm(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.5
	evs := []loop.Event{
		msg(0, loop.Message{Role: loop.RoleUser, Content: "a <b> & \u2028 \"c\"\n"}),
		msg(0, loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text": "<x>"}`, Extra: []byte(`{"k": [1, 2]}`)}}}),
		{Type: loop.EventStepStart, Agent: "a", Step: 1, Offered: []string{"echo"}},
		{Type: loop.EventStepEnd, Agent: "a", Step: 1, Cost: &cost},
		{Type: loop.EventRetry, Agent: "a", Step: 1, Attempt: 2, Message: "<retry>"},
		{Type: loop.EventRunEnd, Result: &loop.Result{StopReason: loop.StopCompleted, Steps: 1, Agent: "<a>"}},
	}
	for _, e := range evs {
		s.Emit(e)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sessions", s.ID, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d lines for %d events", len(lines), len(evs))
	}
	for i, e := range evs {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if lines[i] != string(want) {
			t.Errorf("event %d stored as\n%s\nwant\n%s", i, lines[i], want)
		}
	}
}

// TestRecordHoldsUntilFlush: events Record holds reach the file in one
// write at the next Flush, Emit or Close, in order.
func TestRecordHoldsUntilFlush(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "build"})
	if err != nil {
		t.Fatal(err)
	}
	lines := func() int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(s.Path(), "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	s.Record(msg(0, loop.Message{Role: loop.RoleUser, Content: "one"}))
	s.Record(loop.Event{Type: loop.EventStepStart, Step: 1, StepsMax: 3})
	if n := lines(); n != 0 {
		t.Fatalf("%d events written before Flush", n)
	}
	s.Flush()
	if n := lines(); n != 2 {
		t.Fatalf("%d events written after Flush, want 2", n)
	}
	s.Record(msg(0, loop.Message{Role: loop.RoleAssistant, Content: "two"}))
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "three"}))
	if n := lines(); n != 4 {
		t.Fatalf("%d events written after Emit, want 4", n)
	}
	s.Record(msg(0, loop.Message{Role: loop.RoleAssistant, Content: "four"}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, err := Events(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range History(evs) {
		got = append(got, e.Content)
	}
	if strings.Join(got, ",") != "one,two,three,four" || len(evs) != 5 {
		t.Fatalf("events after Close: %d, history %v", len(evs), got)
	}
}

// TestLongLineReadBack: an event as long as the writer writes (here a
// 70 MiB tool result, past any fixed line limit a reader could pick) is read
// back whole, with the events around it.
func TestLongLineReadBack(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a", ID: "long"})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 70<<20)
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "before"}))
	s.Emit(msg(0, loop.Message{Role: loop.RoleTool, ToolCallID: "c1", Content: big}))
	s.Emit(loop.Event{Type: loop.EventRunEnd, Result: &loop.Result{StopReason: loop.StopCompleted, Steps: 1, StepsMax: 3}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, err := Events(dir, "long")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	if evs[1].Msg == nil || evs[1].Msg.Content != big {
		t.Errorf("the long event was not read back whole")
	}
	if evs[2].Type != loop.EventRunEnd {
		t.Errorf("last event %q, want run.end", evs[2].Type)
	}
}

// TestValidIDAsRegexp: validID accepts exactly what the pattern it replaced,
// ^[A-Za-z0-9_.-]{1,100}$, accepts (it is a loop only for start-up's sake).
func TestValidIDAsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	ids := []string{"", "a", "20260102-030405-abcd", "a.b_c-D9", "..", "a/b", "a b", "a\n", "é", "ä1", "\x00", "a\x00",
		strings.Repeat("x", 99), strings.Repeat("x", 100), strings.Repeat("x", 101), strings.Repeat("é", 50)}
	for c := 0; c < 256; c++ {
		ids = append(ids, string([]byte{byte(c)}), "id"+string([]byte{byte(c)}))
	}
	for _, id := range ids {
		if got, want := validID(id), re.MatchString(id); got != want {
			t.Errorf("validID(%q) = %v, the regexp says %v", id, got, want)
		}
	}
}
