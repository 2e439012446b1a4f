package loop

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hand-written wire encoder (AppendJSON) must write the bytes of the
// reflection encoder it replaced (marshalReflect), for every event. It is
// checked on the events the loop really emits (every event a test's
// recorder receives: see TestMain), on wireCorpus, and on fuzzed events.

// wireChecks gathers what checkWire found over a test binary's run.
var wireChecks struct {
	sync.Mutex
	seen       map[string]int // events checked, by type
	mismatches []string
}

// checkWire compares the two encoders on e, recording a mismatch.
func checkWire(e Event) {
	msg := wireMismatch(e)
	wireChecks.Lock()
	defer wireChecks.Unlock()
	if wireChecks.seen == nil {
		wireChecks.seen = map[string]int{}
	}
	wireChecks.seen[e.Type]++
	if msg != "" && len(wireChecks.mismatches) < 20 {
		wireChecks.mismatches = append(wireChecks.mismatches, msg)
	}
}

// wireMismatch returns what differs between the two encoders on e, or "".
func wireMismatch(e Event) string {
	want, werr := e.marshalReflect()
	got, err := e.AppendJSON([]byte("prefix"))
	switch {
	case (err == nil) != (werr == nil):
		return fmt.Sprintf("%s event: AppendJSON error %v, encoding/json error %v", e.Type, err, werr)
	case err != nil && string(got) != "prefix":
		return fmt.Sprintf("%s event: AppendJSON failed (%v) but appended %q", e.Type, err, got)
	case err == nil && string(got) != "prefix"+string(want):
		return fmt.Sprintf("%s event:\n got %s\nwant prefix%s", e.Type, got, want)
	}
	if m, merr := e.MarshalJSON(); string(m) != string(want) || (merr == nil) != (werr == nil) {
		return fmt.Sprintf("%s event: MarshalJSON %s (%v), want %s", e.Type, m, merr, want)
	}
	return ""
}

// allEventTypes is every event type the loop emits.
var allEventTypes = []string{
	EventRunStart, EventStepStart, EventStepEnd, EventToolStart, EventToolEnd, EventToolDropped,
	EventRetry, EventDoomLoop, EventBudgetExhausted, EventCompaction, EventSubagentStart,
	EventSubagentEnd, EventRunEnd, EventMessage, EventApprovalRequest, EventApprovalDecision,
	EventToolProgress, EventToolLog, EventApprovalDropped,
}

// TestMain runs the tests, then fails when an event a test emitted was
// encoded differently by the two encoders, or, when every test ran, when
// some event type was never emitted (the comparison would not cover it).
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	wireChecks.Lock()
	defer wireChecks.Unlock()
	if len(wireChecks.mismatches) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the wire encoder differs from encoding/json on events the tests emitted:\n%s\n",
			strings.Join(wireChecks.mismatches, "\n"))
		code = 1
	}
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		var missing []string
		for _, typ := range allEventTypes {
			if wireChecks.seen[typ] == 0 {
				missing = append(missing, typ)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test emitted %s events: the wire encoder was not compared on them\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

func TestWireEncoderOnCorpus(t *testing.T) {
	for _, e := range wireCorpus() {
		if msg := wireMismatch(e); msg != "" {
			t.Error(msg)
		}
	}
}

// TestWireEncoderEdges: the events the hand encoder leaves to encoding/json
// (a time or a cost JSON cannot hold, provider data) come out the same,
// errors included, and the types are all known.
func TestWireEncoderEdges(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	nan, inf, tiny := math.NaN(), math.Inf(1), 1.5e-9
	res := &Result{Agent: "a", StopReason: StopCompleted, Cost: &tiny}
	events := []Event{
		{Type: EventRunStart, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Type: EventRunStart, Time: t0.In(time.FixedZone("", 3600+30))},
		{Type: EventRunStart, Time: t0.In(time.FixedZone("", -(2*3600 + 30*60)))},
		{Type: EventStepEnd, Time: t0, Cost: &nan},
		{Type: EventStepEnd, Time: t0, Cost: &tiny, RunCost: &inf},
		{Type: EventRunEnd, Time: t0, Result: &Result{Cost: &inf}},
		{Type: EventRunEnd, Time: t0, Result: res},
		{Type: EventStepStart, Time: t0, Result: res, Message: "m", Offered: []string{"<a>"}},
		{Type: EventStepEnd, Time: t0, Result: res, RunUsage: &Usage{CachedTokens: 3, Estimated: true}},
		{Type: EventCompaction, Time: t0, Cost: &tiny, RunCost: &tiny, Offered: []string{"x"}, Result: &Result{Cost: &nan}},
		{Type: EventMessage, Time: t0, Msg: &Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Extra: []byte(`{ "a" : "<&>\u2028" }`)}}}},
		{Type: EventMessage, Time: t0, Msg: &Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Extra: []byte(`{bad`)}}}},
		{Type: "unknown <type>", Time: t0, Agent: "\xff", Depth: -3},
	}
	for _, e := range events {
		if msg := wireMismatch(e); msg != "" {
			t.Error(msg)
		}
	}
	// approval.dropped is emitted by a durable run's workflow
	// (host/temporal), not by the loop: compared here.
	checkWire(Event{Type: EventApprovalDropped, Time: t0, Agent: "main", Depth: 1, CallID: "c\\x1b", Decision: "always",
		By: "signal from a@b", Message: "approval signal dropped: it arrived while no call was waiting for it"})
}

// FuzzEventWire builds an event of any type from the fuzzer's strings,
// numbers and bits and compares the two encoders on it.
func FuzzEventWire(f *testing.F) {
	f.Add(uint8(1), "a<b>&\"c\"\\\n\u2028\xff", "read_file", int64(3), uint32(0xffff), 0.25, int64(1735787045123456789), int32(0))
	f.Add(uint8(13), "", "explore", int64(-1), uint32(0x5555), 1e-7, int64(0), int32(-3600))
	f.Add(uint8(6), "provider: HTTP 503", "", int64(12), uint32(0xaaaa), 2e21, int64(-1), int32(1))
	f.Add(uint8(16), `{"done": true}`, "worker", int64(2), uint32(0x1c0021), 0.5, int64(1), int32(0))
	f.Fuzz(func(t *testing.T, kind uint8, s1, s2 string, n int64, bits uint32, cost float64, ns int64, zone int32) {
		bit := func(i int) bool { return bits>>i&1 == 1 }
		typ := s2
		if int(kind) < len(allEventTypes) {
			typ = allEventTypes[kind]
		}
		e := Event{Type: typ, Time: time.Unix(0, ns).In(time.FixedZone("", int(zone))), Agent: s2, Depth: int(n % 5)}
		if bit(0) {
			e.Step, e.StepsMax = int(n), int(n>>8)
		}
		if bit(1) {
			e.Final = Bool(bit(2))
		}
		if bit(3) {
			e.Offered = []string{s1, s2}
		} else if bit(4) {
			e.Offered = []string{}
		}
		if bit(5) {
			e.CallID, e.Tool, e.Arguments = s2, s1, s1+s2
			e.IsError, e.DurationMS = Bool(bit(2)), Int64(n)
		}
		if bit(6) {
			e.Attempt, e.DelayMS, e.Status = int(n>>4), Int64(n), int(n>>2)
		}
		if bit(7) {
			e.FinishReason = s1
			e.Usage = &Usage{PromptTokens: int(n), CompletionTokens: 2, TotalTokens: int(n) + 2, CachedTokens: int(n >> 3), Estimated: bit(2)}
		}
		if bit(8) {
			e.Cost = &cost
		}
		if bit(9) {
			e.RunUsage, e.RunCost = &Usage{TotalTokens: 1}, &cost
		}
		if bit(10) {
			e.Replaced, e.Kept, e.Message = int(n), int(n>>1), s1
		}
		if bit(11) {
			budget := int(n)
			r := &Result{Session: s2, Agent: s1, StopReason: StopReason(s1), Steps: int(n), StepsMax: 3, ToolCalls: 1, Output: s1}
			if bit(12) {
				r.Budget, r.Cost = &budget, &cost
			}
			if bit(13) {
				r.Errors = []string{s1, s2}
			} else if bit(14) {
				r.Errors = []string{}
			}
			e.Result = r
		}
		if bit(18) {
			e.Progress, e.Level, e.Logger = &cost, s1, s2
			if bit(19) {
				e.Total = &cost
			}
			if bit(20) {
				e.Data = json.RawMessage(s1)
			}
		}
		if bit(15) {
			m := &Message{Role: Role(s2), Content: s1, Reasoning: s2, ToolCallID: s2, Name: s1, IsError: bit(2)}
			if bit(16) {
				m.ToolCalls = []ToolCall{{ID: s1, Name: s2, Arguments: s1}, {ID: s2}}
			}
			if bit(17) {
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: "x", Extra: []byte(s1)})
			}
			e.Msg = m
		}
		if msg := wireMismatch(e); msg != "" {
			t.Error(msg)
		}
	})
}

// TestAllEventTypesListed: allEventTypes names every Event* constant of
// event.go, so that TestMain's coverage check misses none.
func TestAllEventTypesListed(t *testing.T) {
	b, err := os.ReadFile("event.go")
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[0], "Event") && f[1] == "=" {
			consts = append(consts, strings.Trim(f[2], `"`))
		}
	}
	listed := slices.Clone(allEventTypes)
	sort.Strings(consts)
	sort.Strings(listed)
	if !slices.Equal(consts, listed) {
		t.Errorf("event types in event.go %q, listed %q", consts, listed)
	}
}

// BenchmarkEventJSON encodes the events of wireCorpus with the hand
// encoder (into a reused buffer) and with the reflection encoder; ns/op
// and allocs/op are per event.
func BenchmarkEventJSON(b *testing.B) {
	evs := wireCorpus()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		i := 0
		for b.Loop() {
			buf, _ = evs[i%len(evs)].AppendJSON(buf[:0])
			i++
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_, _ = evs[i%len(evs)].marshalReflect()
			i++
		}
	})
}
