//go:build !notemporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/temporal"
	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// gatedModel answers main's first request with a call of read_file (id
// call-a) once the test opens the gate, having said that the request
// arrived; the next request, with the tool's result, gets a text.
type gatedModel struct {
	mu      sync.Mutex
	entered chan struct{}
	gate    chan struct{}
}

func (m *gatedModel) reset() (entered, gate chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entered, m.gate = make(chan struct{}, 1), make(chan struct{})
	return m.entered, m.gate
}

func (m *gatedModel) choose(body []byte, _ http.Header) fakemodel.Reply {
	var req struct {
		Messages []loop.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fakemodel.Reply{Status: 400}
	}
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			return fakemodel.Reply{Text: "read: " + msg.Content}
		}
	}
	m.mu.Lock()
	entered, gate := m.entered, m.gate
	m.mu.Unlock()
	select {
	case entered <- struct{}{}:
	default:
	}
	select {
	case <-gate:
	case <-time.After(2 * time.Minute): // a test that failed does not hold the worker
	}
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call-a", Name: "read_file", Arguments: json.RawMessage(`{"path":"f0.txt"}`)}}}
}

var startedLine = regexp.MustCompile(`"run":"(run-[0-9a-f]+)".*run started on Temporal`)

// waitLineOrExit waits for a line of w matching re, or for the process to
// exit (exited; nil: never): it returns the match, or nil when the process
// exited first (a run waiting for a decision does not exit).
func waitLineOrExit(t *testing.T, w *lineWaiter, re *regexp.Regexp, exited <-chan struct{}) []string {
	t.Helper()
	deadline := time.After(90 * time.Second)
	seen := 0
	for {
		w.mu.Lock()
		for ; seen < len(w.lines); seen++ {
			if m := re.FindStringSubmatch(w.lines[seen]); m != nil {
				w.mu.Unlock()
				return m
			}
		}
		all := strings.Join(w.lines, "\n")
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-exited:
			// A run that ended waits for nothing: no call waited, or the
			// run broke (its output says which).
			return nil
		case <-deadline:
			t.Fatalf("no line matching %s in 90s; stderr so far:\n%s", re, all)
		}
	}
}

// TestTemporalApprovalSignalNotBuffered: an approval signal sent while no
// call waits (here: during the model request that will ask for the call)
// decides nothing, whether it names no call ({"verdict":"always"}) or the
// call the model is about to make: the call, when it comes, waits for
// approval, and the session records the dropped signal and why. runs
// approve then decides it, and the decision records who sent it
// (user@host).
func TestTemporalApprovalSignalNotBuffered(t *testing.T) {
	model := &gatedModel{}
	model.reset()
	addr, dir, srv := temporalE2E(t, map[string]string{"agents.hcl": approveConfig, "f0.txt": "alpha\n"}, model.choose)
	startWorker(t, dir, addr, srv.URL(), "a")
	c, err := temporaltest.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	by := "signal from " + u.Username + "@" + host

	for _, tc := range []struct {
		name   string
		signal temporal.Approval // sent during the model request
	}{
		{"always_naming_no_call", temporal.Approval{Verdict: loop.AllowAlways}},
		{"naming_the_next_call", temporal.Approval{CallID: "call-a", Verdict: loop.Allow, From: "eve@far"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered, gate := model.reset()
			cmd, stdout, w := startClient(t, dir, addr, "-a", "main", "Read it.")
			exited := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); <-exited })
			id := w.wait(t, startedLine)[1]
			select {
			case <-entered:
			case <-exited:
				t.Fatalf("the run ended before its model request: %v\n%s", waitErr, stdout.String())
			}
			// The model request runs: no call waits. The signal is in the
			// workflow's history when SignalWorkflow returns.
			if err := c.SignalWorkflow(context.Background(), id, "", temporal.SignalApproval, tc.signal); err != nil {
				t.Fatal(err)
			}
			close(gate)
			m := waitLineOrExit(t, w, waitsLine, exited)
			if m == nil {
				t.Fatalf("call-a never waited for approval: the signal sent during the model request decided it; the run printed:\n%s", stdout.String())
			}
			if m[3] != "call-a" {
				t.Fatalf("waiting call %q, want call-a", m[3])
			}
			// The run says a call waits when it asks (approval.request),
			// before a decision: runs approve finds the call still waiting
			// only if the signal sent earlier did not decide it.
			code, out, errOut := agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "approve", id, "call-a")
			if code == 2 && strings.Contains(errOut, "has no call waiting") {
				t.Fatalf("call-a did not wait for approval: the signal sent during the model request decided it (runs approve: %s)", strings.TrimSpace(errOut))
			}
			if code != 0 || !strings.Contains(out, "approved: call call-a (read_file)") {
				t.Fatalf("runs approve exited %d: %s%s", code, out, errOut)
			}
			<-exited
			if waitErr != nil {
				t.Fatalf("run: %v\n%s", waitErr, stdout.String())
			}
			var res loop.Result
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("--json: %v\n%s", err, stdout.String())
			}
			if res.StopReason != loop.StopCompleted || res.ToolCalls != 1 {
				t.Errorf("result %s after %d tool calls; want completed after 1", res.StopReason, res.ToolCalls)
			}
			events, err := os.ReadFile(filepath.Join(dir, "data", "sessions", res.Session, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var dropped, decided []loop.Event
			for _, line := range bytes.Split(bytes.TrimSpace(events), []byte("\n")) {
				var ev loop.Event
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatalf("events.jsonl: %v: %s", err, line)
				}
				switch ev.Type {
				case loop.EventApprovalDropped:
					dropped = append(dropped, ev)
				case loop.EventApprovalDecision:
					decided = append(decided, ev)
				}
			}
			wantBy := "signal"
			if tc.signal.From != "" {
				wantBy += " from " + tc.signal.From
			}
			if len(dropped) != 1 || dropped[0].CallID != tc.signal.CallID || dropped[0].Decision != string(tc.signal.Verdict) ||
				dropped[0].By != wantBy || !strings.Contains(dropped[0].Message, "arrived while no call was waiting") {
				t.Errorf("approval.dropped events %+v; want one for the signal (%+v) saying it arrived while no call was waiting", dropped, tc.signal)
			}
			if len(decided) != 1 || decided[0].CallID != "call-a" || decided[0].Decision != "allow" || decided[0].By != by {
				t.Errorf("approval.decision events %+v; want call-a allowed by %q", decided, by)
			}
		})
	}
}
