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
	"time"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// approveConfig is likeLocalConfig's shape with read_file needing
// approval, and an agent with an output schema.
const approveConfig = `host {
  data_dir = "./data"
}
provider "fake" {
  base_url = env("OPENAI_BASE_URL")
  headers  = { "X-Worker" = env("WORKER") }
  retry {
    attempts  = 3
    initial   = "10ms"
    max_delay = "1s"
  }
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
plugin "core" {
  source = "builtin:core"
  mount "workspace" {
    host  = "."
    guest = "/workspace"
    mode  = "ro"
  }
}
agent "main" {
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
		case <-deadline:
			t.Fatalf("no line matching %s in 90s; stderr so far:\n%s", re, all)
		}
	}
}

var waitsLine = regexp.MustCompile(`^agenthost: run (\S+) waits for a decision about (\S+) \(call (\S+)\)`)

// TestTemporalApproval: a durable run's call that needs approval waits in
// its workflow; runs show lists it; the worker is killed (SIGKILL) while it
// waits and another one started; runs approve then lets the call run and
// the run completes. runs deny --reason refuses a call of a subagent (a
// child workflow) with the reason reaching the model, and the lead's
// output schema gives output_json.
func TestTemporalApproval(t *testing.T) {
	if _, err := exec.LookPath("agenthost"); err != nil {
		t.Skip("agenthost is not on $PATH (run through go test, which puts it there)")
	}
	addr := temporaltest.Start(t)
	dir := t.TempDir()
	for name, content := range map[string]string{"agents.hcl": approveConfig, "f0.txt": "alpha\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := fakemodel.StartFunc(approvalModel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	victim := startWorker(t, dir, addr, srv.URL(), "a")

	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *lineWaiter) {
		cmd := exec.Command("agenthost", append([]string{"run", "--temporal", addr, "--json"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WORKER=client", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "AGENTHOST_CONFIG=")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		w := newLineWaiter(t, cmd)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		return cmd, &stdout, w
	}

	// 1. Approve after the worker that ran the workflow died.
	cmd, stdout, w := start("-a", "main", "Read it.")
	m := w.wait(t, waitsLine)
	id, tool, call := m[1], m[2], m[3]
	if tool != "read_file" {
		t.Fatalf("waiting tool %q, want read_file", tool)
	}
	code, out, errOut := agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "show", id)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("for approval: call %s of agent main: read_file({\"path\":\"f0.txt\"})", call)) ||
		!strings.Contains(out, fmt.Sprintf("agenthost runs approve %s %s", id, call)) {
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
