package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/loop"
)

// The tests of Run use the real host, loop, provider and session files; the
// model's answers are the one thing faked, by a fakemodel server on
// loopback.

const runConfig = `provider "fake" {
  base_url = "%s"
  retry {
    attempts = 2
    initial  = "1ms"
  }
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
agent "main" {
  prompt  = "You are main."
  default = true
  steps   = 3
}
agent "explore" {
  prompt = "You explore."
}
`

// runHost starts a fake model serving script (JSON lines) and builds a host
// whose provider is that server.
func runHost(t *testing.T, script string) (*Host, *fakemodel.Server) {
	t.Helper()
	replies, err := fakemodel.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakemodel.Start(replies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cfg := project(t, map[string]string{"agents.hcl": fmt.Sprintf(runConfig, srv.URL())})
	ctx := context.Background()
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h, srv
}

// events is a sink recording what it is given.
type events struct {
	mu  sync.Mutex
	evs []loop.Event
}

func (s *events) Emit(e loop.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, e)
	s.mu.Unlock()
}

// types lists the event types of evs, in order.
func types(evs []loop.Event) []string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return ts
}

// runEnd returns the top-level run.end events of evs.
func runEnds(evs []loop.Event) []loop.Event {
	var out []loop.Event
	for _, e := range evs {
		if e.Type == loop.EventRunEnd && e.Depth == 0 {
			out = append(out, e)
		}
	}
	return out
}

// TestRunNewSession: without a session, Run runs the default agent in a new
// session that records every event the caller's sink receives, in the same
// order, and the session id is in the result and in run.end (the same one
// in both places).
func TestRunNewSession(t *testing.T) {
	h, srv := runHost(t, `{"text": "Nice to meet you, Ada."}`)
	var sink events
	var text strings.Builder
	res, err := h.Run(context.Background(), RunRequest{Prompt: "My name is Ada.", Sink: &sink,
		OnText: func(agent string, depth int, s string) { text.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != loop.StopCompleted || res.Agent != "main" || res.Output != "Nice to meet you, Ada." || res.Session == "" {
		t.Fatalf("result %+v", res)
	}
	if text.String() != "Nice to meet you, Ada." {
		t.Errorf("OnText got %q", text.String())
	}
	meta, stored, err := session.Events(h.Config.Host.DataDir, res.Session)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Agent != "main" || meta.Config != h.Config.File {
		t.Errorf("session meta %+v", meta)
	}
	if diff := cmp.Diff(types(sink.evs), types(stored)); diff != "" || len(stored) == 0 {
		t.Errorf("the session and the sink got different events (-sink +session):\n%s", diff)
	}
	for _, evs := range [][]loop.Event{sink.evs, stored} {
		ends := runEnds(evs)
		if len(ends) != 1 || ends[0].Result == nil || ends[0].Result.Session != res.Session {
			t.Errorf("run.end %+v, want one carrying session %s", ends, res.Session)
		}
	}
	if got := srv.Format("summary"); !strings.Contains(got, `msgs=system,user last_user="My name is Ada."`) {
		t.Errorf("request:\n%s", got)
	}
}

// TestRunContinuedSession: with a session, Run sends its history with the
// new prompt, appends to it, and reports the same session id.
func TestRunContinuedSession(t *testing.T) {
	h, srv := runHost(t, `{"text": "Nice to meet you, Ada."}
{"text": "Your name is Ada."}`)
	ctx := context.Background()
	first, err := h.Run(ctx, RunRequest{Prompt: "My name is Ada."})
	if err != nil {
		t.Fatal(err)
	}
	var sink events
	res, err := h.Run(ctx, RunRequest{Agent: "main", Prompt: "What is my name?", Session: first.Session, Sink: &sink})
	if err != nil {
		t.Fatal(err)
	}
	if res.Session != first.Session || res.Output != "Your name is Ada." {
		t.Errorf("continued run: session %q (want %q), output %q", res.Session, first.Session, res.Output)
	}
	if ends := runEnds(sink.evs); len(ends) != 1 || ends[0].Result.Session != first.Session {
		t.Errorf("run.end %+v, want session %s", ends, first.Session)
	}
	want := "#1 model=fake-model tools=- tool_choice=- msgs=system,user last_user=\"My name is Ada.\"\n" +
		"#2 model=fake-model tools=- tool_choice=- msgs=system,user,assistant,user last_user=\"What is my name?\"\n"
	if diff := cmp.Diff(want, srv.Format("summary")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	_, stored, err := session.Events(h.Config.Host.DataDir, first.Session)
	if err != nil {
		t.Fatal(err)
	}
	if ends := runEnds(stored); len(ends) != 2 {
		t.Errorf("the session holds %d top-level run.end events, want 2 (one per run)", len(ends))
	}
	hist := session.History(stored)
	var contents []string
	for _, m := range hist {
		contents = append(contents, m.Content)
	}
	if diff := cmp.Diff([]string{"My name is Ada.", "Nice to meet you, Ada.", "What is my name?", "Your name is Ada."}, contents); diff != "" {
		t.Errorf("session history (-want +got):\n%s", diff)
	}
}

// TestRunRefused: requests that cannot run are usage errors, with the
// cause for errors.As / errors.Is; nothing reaches the model and the
// session is left as it was.
func TestRunRefused(t *testing.T) {
	h, srv := runHost(t, `{"text": "Hello."}`)
	ctx := context.Background()
	first, err := h.Run(ctx, RunRequest{Prompt: "Hi."})
	if err != nil {
		t.Fatal(err)
	}
	_, before, _ := session.Events(h.Config.Host.DataDir, first.Session)

	t.Run("unknown agent", func(t *testing.T) {
		res, err := h.Run(ctx, RunRequest{Agent: "mian", Prompt: "Hi.", Session: first.Session})
		var ue *UsageError
		var ua *UnknownAgentError
		if res != nil || !errors.As(err, &ue) || !errors.As(err, &ua) {
			t.Fatalf("Run = %v, %v; want a usage error for the agent", res, err)
		}
		if diff := cmp.Diff(&UnknownAgentError{Name: "mian", Agents: []string{"explore", "main"}}, ua); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if ue.Session != "" {
			t.Errorf("an agent error names session %q", ue.Session)
		}
	})
	t.Run("session of another agent", func(t *testing.T) {
		res, err := h.Run(ctx, RunRequest{Agent: "explore", Prompt: "Hi.", Session: first.Session})
		var ue *UsageError
		var sa *SessionAgentError
		if res != nil || !errors.As(err, &ue) || !errors.As(err, &sa) {
			t.Fatalf("Run = %v, %v; want a usage error for the session's agent", res, err)
		}
		if diff := cmp.Diff(&SessionAgentError{Session: first.Session, Agent: "main", Asked: "explore"}, sa); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if ue.Session != first.Session {
			t.Errorf("UsageError.Session = %q, want %q", ue.Session, first.Session)
		}
		// The refused run let the session go: it can be opened again.
		s, err := session.Open(h.Config.Host.DataDir, first.Session)
		if err != nil {
			t.Fatalf("session still locked after the refused run: %v", err)
		}
		s.Close()
	})
	t.Run("session not found", func(t *testing.T) {
		_, err := h.Run(ctx, RunRequest{Prompt: "Hi.", Session: "nosuch"})
		var ue *UsageError
		if !errors.As(err, &ue) || !errors.Is(err, session.ErrNotFound) || ue.Session != "nosuch" {
			t.Fatalf("Run: %v; want a usage error wrapping session.ErrNotFound", err)
		}
	})
	t.Run("locked session", func(t *testing.T) {
		if !lockingSystem() {
			t.Skip("sessions are not locked on this system")
		}
		holder, err := session.Open(h.Config.Host.DataDir, first.Session)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		res, err := h.Run(ctx, RunRequest{Prompt: "Hi.", Session: first.Session})
		var ue *UsageError
		var be *session.BusyError
		if res != nil || !errors.As(err, &ue) || !errors.Is(err, session.ErrBusy) || !errors.As(err, &be) {
			t.Fatalf("Run = %v, %v; want a usage error wrapping session.ErrBusy", res, err)
		}
		if ue.Session != first.Session || be.ID != first.Session {
			t.Errorf("busy error names %q / %q, want %q", ue.Session, be.ID, first.Session)
		}
	})

	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the model, want only the first run's", n)
	}
	_, after, _ := session.Events(h.Config.Host.DataDir, first.Session)
	if diff := cmp.Diff(types(before), types(after)); diff != "" {
		t.Errorf("a refused run changed the session (-before +after):\n%s", diff)
	}
}

// lockingSystem tells whether sessions are locked here (see
// internal/session: flock or LockFileEx).
func lockingSystem() bool {
	switch runtime.GOOS {
	case "darwin", "dragonfly", "freebsd", "linux", "netbsd", "openbsd", "windows":
		return true
	}
	return false
}

// TestRunTracer checks when a Host makes its trace exporter: never when
// traces are not wanted (the default: no exporter, nothing per event), and
// on the first run, not before, when an OTLP endpoint is set.
func TestRunTracer(t *testing.T) {
	script := `{"text": "one"}` + "\n" + `{"text": "two"}`
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"default", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, true},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replies, err := fakemodel.ParseScript([]byte(script))
			if err != nil {
				t.Fatal(err)
			}
			srv, err := fakemodel.Start(replies)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			cfg := project(t, map[string]string{"agents.hcl": fmt.Sprintf(runConfig, srv.URL())})
			ctx := context.Background()
			h, diags, err := New(ctx, cfg, Options{NoCache: true, Getenv: func(k string) string { return tc.env[k] }})
			if err != nil || diags.HasErrors() {
				t.Fatal(err, diags)
			}
			if h.tracer != nil {
				t.Fatal("exporter made before any run")
			}
			for range 2 {
				if _, err := h.Run(ctx, RunRequest{Prompt: "hi"}); err != nil {
					t.Fatal(err)
				}
			}
			if got := h.tracer != nil; got != tc.want {
				t.Errorf("exporter made: %v, want %v", got, tc.want)
			}
			h.Close(ctx) // an endpoint where nothing listens: a warning, no error, no wait
		})
	}
}

// TestRunsShareSlots: the runs of one host and its CallTool share the
// host's max_parallel_tools slots. With one slot, held by a run whose call
// blocks, a second run's call and a CallTool wait instead of running: the
// run ends aborted at its deadline with its call answered as aborted and
// never started, and CallTool fails naming the limit. Once the first run
// ends, the slot is free again.
func TestRunsShareSlots(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	replies, err := fakemodel.ParseScript([]byte(`{"tool_calls": [{"name": "t__block"}]}
{"tool_calls": [{"name": "t__echo", "arguments": {"text": "b"}}]}
{"text": "never"}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakemodel.Start(replies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cfg := project(t, map[string]string{"agents.hcl": fmt.Sprintf(`host {
  max_parallel_tools = 1
}
provider "fake" {
  base_url = %q
  retry {
    attempts = 1
  }
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
mcp_server "t" {
  command = [%q]
  env     = { AGENTHOST_MCPTEST = "tools" }
  tools   = ["echo", "block"]
}
agent "a" {
  tools = ["t__block", "t__echo"]
}
`, srv.URL(), exe)})
	ctx := context.Background()
	h, diags, err := New(ctx, cfg, Options{NoCache: true})
	if err != nil || diags.HasErrors() {
		t.Fatal(err, diags)
	}
	t.Cleanup(func() { h.Close(ctx) })

	// Run A takes the only slot with a call that blocks until A ends.
	actx, cancelA := context.WithCancel(ctx)
	defer cancelA()
	started := make(chan struct{})
	var once sync.Once
	sinkA := loop.SinkFunc(func(e loop.Event) {
		if e.Type == loop.EventToolStart {
			once.Do(func() { close(started) })
		}
	})
	doneA := make(chan *loop.Result)
	go func() {
		res, err := h.Run(actx, RunRequest{Prompt: "block", Sink: sinkA})
		if err != nil {
			t.Error(err)
		}
		doneA <- res
	}()
	<-started

	// Run B's call waits for the slot until B's deadline.
	bctx, cancelB := context.WithTimeout(ctx, time.Second)
	defer cancelB()
	var sinkB events
	resB, err := h.Run(bctx, RunRequest{Prompt: "echo", Sink: &sinkB})
	if err != nil {
		t.Fatal(err)
	}
	if resB.StopReason != loop.StopAborted || resB.ToolCalls != 0 {
		t.Errorf("run B: stop %s, %d tool calls; want aborted, none run", resB.StopReason, resB.ToolCalls)
	}
	for _, e := range sinkB.evs {
		if e.Type == loop.EventToolStart {
			t.Errorf("run B started its call while run A held the host's only slot")
		}
		if e.Type == loop.EventMessage && e.Msg.Role == loop.RoleTool && e.Msg.Content != loop.AbortedAnswer(loop.ToolCall{}).Content {
			t.Errorf("run B's call answered %q, want the aborted answer", e.Msg.Content)
		}
	}

	// So does a tool call outside any run.
	cctx, cancelC := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelC()
	if res, err := h.CallTool(cctx, "t__echo", `{"text":"c"}`, "c1"); err == nil || !strings.Contains(err.Error(), "host.max_parallel_tools") {
		t.Errorf("CallTool while the slot was taken = %+v, %v; want an error naming host.max_parallel_tools", res, err)
	}

	cancelA()
	if resA := <-doneA; resA.StopReason != loop.StopAborted || resA.ToolCalls != 1 {
		t.Errorf("run A: stop %s, %d tool calls; want aborted after its one call", resA.StopReason, resA.ToolCalls)
	}
	if res, err := h.CallTool(ctx, "t__echo", `{"text":"d"}`, "d1"); err != nil || res.IsError {
		t.Errorf("CallTool once the slot is free = %+v, %v", res, err)
	}
}
