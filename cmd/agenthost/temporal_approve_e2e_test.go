//go:build !notemporal

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/loop"
)

// approveConfig is e2eHead with read_file needing approval, and an agent
// with an output schema.
const approveConfig = e2eHead + `agent "main" {
  prompt  = "You are a test agent."
  tools   = ["read_file"]
  approve = ["read_*"]
}
agent "lead" {
  prompt    = "You lead."
  subagents = ["main"]
  output_schema = { type = "object", required = ["answer"] }
}
temporal {
  task_queue = "e2e"
}
`

// approvalModel reads f0.txt, then answers with the tool's result; the lead
// delegates to main, then answers {"answer": <main's answer>}.
func approvalModel(body []byte, _ http.Header) fakemodel.Reply {
	var req struct {
		Messages []loop.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fakemodel.Reply{Status: 400}
	}
	lead := strings.HasPrefix(req.Messages[0].Content, "You lead.")
	var tool string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			tool = m.Content
		}
	}
	switch {
	case tool == "" && lead:
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "main", Arguments: json.RawMessage(`{"prompt":"read it"}`)}}}
	case tool == "":
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{"path":"f0.txt"}`)}}}
	case lead:
		first, _, _ := strings.Cut(tool, "\n")
		b, _ := json.Marshal(map[string]string{"answer": first})
		return fakemodel.Reply{Text: string(b)}
	}
	return fakemodel.Reply{Text: "read: " + tool}
}

// lineWaiter collects a process's stderr and waits for a line matching a
// pattern.
type lineWaiter struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

// newLineWaiter reads cmd's stderr; call it before cmd.Start.
func newLineWaiter(t *testing.T, cmd *exec.Cmd) *lineWaiter {
	w := &lineWaiter{more: make(chan struct{}, 1)}
	r, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

func (w *lineWaiter) wait(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	return waitLineOrExit(t, w, re, nil)
}

// startClient starts `agenthost run --temporal addr --json args...` in dir,
// a client that only waits for the run (the workers call the model): its
// stdout, and its stderr's lines. The caller stops and waits for it.
func startClient(t *testing.T, dir, addr string, args ...string) (*exec.Cmd, *bytes.Buffer, *lineWaiter) {
	t.Helper()
	cmd := exec.Command("agenthost", append([]string{"run", "--temporal", addr, "--json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WORKER=client", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "AGENTHOST_CONFIG=")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	w := newLineWaiter(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, w
}

var waitsLine = regexp.MustCompile(`^agenthost: run (\S+) waits for a decision about (\S+) \(call (\S+)\)`)

// TestTemporalApproval: a durable run's call that needs approval waits in
// its workflow; runs show lists it; the worker is killed (SIGKILL) while it
// waits and another one started; runs approve then lets the call run and
// the run completes. runs deny --reason refuses a call of a subagent (a
// child workflow) with the reason reaching the model, and the lead's
// output schema gives output_json.
func TestTemporalApproval(t *testing.T) {
	addr, dir, srv := temporalE2E(t, map[string]string{"agents.hcl": approveConfig, "f0.txt": "alpha\n"}, approvalModel)
	victim := startWorker(t, dir, addr, srv.URL(), "a")

	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *lineWaiter) {
		cmd, stdout, w := startClient(t, dir, addr, args...)
		t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		return cmd, stdout, w
	}

	// 1. Approve after the worker that ran the workflow died.
	cmd, stdout, w := start("-a", "main", "Read it.")
	m := w.wait(t, waitsLine)
	id, tool, call := m[1], m[2], m[3]
	if tool != "read_file" {
		t.Fatalf("waiting tool %q, want read_file", tool)
	}
	code, out, errOut := agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "show", id)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("for approval: call %s of agent main: read_file, with:\n  path: f0.txt\n", call)) ||
		!strings.Contains(out, fmt.Sprintf("\n  agenthost runs approve -- %s %s\n", id, call)) {
		t.Fatalf("runs show exited %d:\n%s%s\nwant the waiting call listed", code, out, errOut)
	}
	victim.Process.Kill()
	victim.Wait()
	startWorker(t, dir, addr, srv.URL(), "b")
	code, out, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "approve", id, "wrong-call")
	if code != 2 || !strings.Contains(errOut, "does not wait; the waiting call is "+call) {
		t.Errorf("runs approve with another call exited %d: %s%s", code, out, errOut)
	}
	code, out, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "approve", id)
	if code != 0 || !strings.Contains(out, "approved: call "+call+" (read_file) of agent main") {
		t.Fatalf("runs approve exited %d: %s%s", code, out, errOut)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout)
	}
	var res loop.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if res.StopReason != loop.StopCompleted || res.ToolCalls != 1 || !strings.Contains(res.Output, "alpha") {
		t.Errorf("result %s, %d tool calls, output %q; want completed after reading f0.txt", res.StopReason, res.ToolCalls, res.Output)
	}
	events, err := os.ReadFile(filepath.Join(dir, "data", "sessions", res.Session, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"type":"approval.decision",.*"call_id":"` + regexp.QuoteMeta(call) + `","tool":"read_file","decision":"allow","by":"signal from [^"@]+@[^"]+"`).Match(events) {
		t.Errorf("the session has no approval.decision by signal from USER@HOST:\n%s", events)
	}

	// 2. Deny a subagent's call with a reason; the lead's answer is JSON.
	cmd, stdout, w = start("-a", "lead", "Delegate.")
	m = w.wait(t, waitsLine)
	id, call = m[1], m[3]
	code, out, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "deny", id, call, "--reason", "not today")
	if code != 0 || !strings.Contains(out, "denied: call "+call+" (read_file) of agent main") {
		t.Fatalf("runs deny exited %d: %s%s", code, out, errOut)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout)
	}
	var lead struct {
		StopReason loop.StopReason   `json:"stop_reason"`
		OutputJSON map[string]string `json:"output_json"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &lead); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if lead.StopReason != loop.StopCompleted || !strings.Contains(lead.OutputJSON["answer"], "the user denied it. Reason: not today") {
		t.Errorf("lead: %s, output_json %v; want completed with main's answer quoting the denial", lead.StopReason, lead.OutputJSON)
	}
}

// TestTemporalApprovePrintedCommand: the commands run --temporal prints
// for a waiting call carry the model's call id quoted and after "--"
// (issue 34, finding 6). Pasted into /bin/sh as printed, the approve line
// of a call whose id is "c1;touch${IFS}pwned;#" approves exactly that
// call and creates no file; that of a call whose id is "--always"
// approves the call once, not every later call of the tool.
func TestTemporalApprovePrintedCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	addr, dir, srv := temporalE2E(t, map[string]string{"f0.txt": "alpha\n"}, func(body []byte, _ http.Header) fakemodel.Reply {
		var req struct {
			Messages []loop.Message `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return fakemodel.Reply{Status: 400}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return fakemodel.Reply{Text: "read"}
		}
		// The prompt names the call id the model uses.
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: strings.TrimPrefix(last.Content, "id "), Name: "read_file", Arguments: json.RawMessage(`{"path":"f0.txt"}`)}}}
	})
	// The temporal block names the server, so the printed command needs
	// nothing more.
	cfg := strings.Replace(approveConfig, `task_queue = "e2e"`, fmt.Sprintf("task_queue = \"e2e\"\n  address = %q", addr), 1)
	if err := os.WriteFile(filepath.Join(dir, "agents.hcl"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startWorker(t, dir, addr, srv.URL(), "a")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "worker-a.log"))
			t.Logf("worker log:\n%s", b)
		}
	})
	// The approve command: on a line of its own (or, as agenthost before
	// the fix printed it, after the waits line's colon).
	approveLine := regexp.MustCompile(`^(?:  |agenthost: run .*: )(agenthost runs approve .*?)(?:, or runs deny .*)?$`)
	for _, tc := range []struct{ call, decided string }{
		{"c1;touch${IFS}pwned;#", "approved: call c1;touch${IFS}pwned;# (read_file)"},
		{"--always", "approved: call --always (read_file)"},
	} {
		cmd, stdout, w := startClient(t, dir, addr, "-a", "main", "id "+tc.call)
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			if t.Failed() {
				t.Logf("run's stdout:\n%s", stdout.String())
			}
		})
		m := w.wait(t, waitsLine)
		if m[3] != tc.call {
			t.Fatalf("waiting call %q, want %q", m[3], tc.call)
		}
		line := w.wait(t, approveLine)[1]
		// Pasted as printed: sh runs the line.
		paste := exec.Command(sh, "-c", line)
		paste.Dir = dir
		paste.Env = append(os.Environ(), "WORKER=client", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "AGENTHOST_CONFIG=")
		out, err := paste.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.decided) {
			t.Errorf("call %q: sh -c %q: %v\n%s\nwant %q", tc.call, line, err, out, tc.decided)
			// Decide the call that still waits, so the run ends.
			agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "deny", m[1])
			cmd.Wait()
			continue
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run: %v\n%s", err, stdout.String())
		}
		var res loop.Result
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.StopReason != loop.StopCompleted || res.ToolCalls != 1 {
			t.Errorf("call %q: result %s (%v), want completed after one call", tc.call, stdout.String(), err)
		}
		events, err := os.ReadFile(filepath.Join(dir, "data", "sessions", res.Session, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`"type":"approval.decision",.*"tool":"read_file","decision":"allow","by":"signal( from [^"]*)?"`).Match(events) {
			t.Errorf("call %q: the session has no approval.decision allow (once) by signal:\n%s", tc.call, events)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("pasting the printed command ran the shell command hidden in the call id (pwned exists)")
	}
}
