//go:build !notemporal

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/runs"
	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// The distributed mode against a real Temporal server: the Temporal CLI's
// dev server (in memory, on loopback), real agenthost worker processes,
// real runs of the builtin core plugin, and the fake model server. These
// tests skip when the temporal command is missing.

// e2eHead is the start of the agents.hcl of the end-to-end tests: the
// fake model (each worker names itself in a header), the core plugin
// reading the test's directory.
const e2eHead = `host {
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
`

// e2eConfig is e2eHead with one agent.
const e2eConfig = e2eHead + `agent "main" {
  prompt = "You are a test agent."
  tools  = ["read_file"]
}
temporal {
  task_queue = "e2e"
}
`

// e2eFiles are read by every run, one per step, and echoed by the model
// in its answer.
var e2eFiles = []string{"alpha", "beta", "gamma"}

// reqKey is one step of one run: the run's number and the number of tool
// results its request carries.
type reqKey struct{ run, step int }

// e2eModel answers every run the same way: a read_file call per file, one
// per step, then a text quoting the tool results it was sent. It counts
// requests per run and step and per worker.
type e2eModel struct {
	mu       sync.Mutex
	seen     map[reqKey][]string // the bodies of each step's requests
	byWorker map[string]int
	from     chan string // the worker of each request, as it arrives
}

func (m *e2eModel) choose(body []byte, h http.Header) fakemodel.Reply {
	var req struct {
		Messages []loop.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fakemodel.Reply{Status: 400}
	}
	run := -1
	var results []string
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			if n, err := strconv.Atoi(strings.TrimPrefix(msg.Content, "task ")); err == nil {
				run = n
			}
		case "tool":
			results = append(results, msg.Content)
		}
	}
	step := len(results)
	m.mu.Lock()
	k := reqKey{run, step}
	m.seen[k] = append(m.seen[k], string(body))
	m.byWorker[h.Get("X-Worker")]++
	m.mu.Unlock()
	m.from <- h.Get("X-Worker")
	// A pause before each chunk keeps the runs busy while a worker dies.
	if step < len(e2eFiles) {
		args, _ := json.Marshal(map[string]string{"path": "f" + strconv.Itoa(step) + ".txt"})
		return fakemodel.Reply{ChunkDelay: "20ms", ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: args}}}
	}
	return fakemodel.Reply{ChunkDelay: "20ms", Text: fmt.Sprintf("run %d: %s", run, strings.Join(results, " "))}
}

// startWorker starts `agenthost worker` in dir, naming itself name to the
// model, and returns the process.
func startWorker(t *testing.T, dir, addr, modelURL, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("agenthost", "worker", "--temporal", addr, "--heartbeat", "1s", "--log-level", "warn")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+modelURL, "WORKER="+name, "AGENTHOST_CONFIG=")
	logf, err := os.Create(filepath.Join(dir, "worker-"+name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start worker %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		logf.Close()
	})
	return cmd
}

// temporalE2E sets up an end-to-end test of the distributed mode: it skips
// when agenthost is not on $PATH, starts the Temporal dev server (addr),
// writes files (name → content) into a new directory (dir) and starts the
// fake model answering with choose.
func temporalE2E(t *testing.T, files map[string]string, choose fakemodel.Chooser) (addr, dir string, srv *fakemodel.Server) {
	t.Helper()
	if _, err := exec.LookPath("agenthost"); err != nil {
		t.Skip("agenthost is not on $PATH (run through go test, which puts it there)")
	}
	addr = temporaltest.Start(t)
	dir = t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := fakemodel.StartFunc(choose)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return addr, dir, srv
}

// TestTemporalWorkerKilled: two workers, 20 concurrent runs, one worker
// killed (SIGKILL) mid-run: every run completes on the other worker with
// the right result, each step counted once, and any request sent twice is
// the same request (an activity of the dead worker, retried).
func TestTemporalWorkerKilled(t *testing.T) {
	files := map[string]string{"agents.hcl": e2eConfig}
	for i, c := range e2eFiles {
		files["f"+strconv.Itoa(i)+".txt"] = c
	}
	const runs = 20
	m := &e2eModel{seen: map[reqKey][]string{}, byWorker: map[string]int{}, from: make(chan string, 4*runs*4)}
	addr, dir, srv := temporalE2E(t, files, m.choose)

	victim := startWorker(t, dir, addr, srv.URL(), "a")
	startWorker(t, dir, addr, srv.URL(), "b")

	type outcome struct {
		code   int
		stdout string
		stderr string
	}
	outs := make([]outcome, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("agenthost", "run", "--temporal", addr, "--json", "task "+strconv.Itoa(i))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "WORKER=client", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "AGENTHOST_CONFIG=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			outs[i] = outcome{code, stdout.String(), stderr.String()}
		}()
	}

	// Kill worker a once it has sent 10 model requests: its runs are then
	// mid-way, some with a request or a tool call in flight.
	killed := make(chan struct{})
	go func() {
		n := 0
		for w := range m.from {
			if w == "a" {
				if n++; n == 10 {
					victim.Process.Kill()
					close(killed)
				}
			}
		}
	}()
	wg.Wait()
	close(m.from)
	select {
	case <-killed:
	default:
		t.Fatalf("worker a never sent 10 requests (by worker: %v); the test killed nothing", m.byWorker)
	}

	for i, o := range outs {
		if o.code != 0 {
			t.Errorf("run %d exited %d\nstdout: %s\nstderr: %s", i, o.code, o.stdout, o.stderr)
			continue
		}
		var res loop.Result
		if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
			t.Errorf("run %d: --json output: %v\n%s", i, err, o.stdout)
			continue
		}
		// The output quotes this run's tool results (read_file numbers
		// the lines): the files' contents, in order.
		want := fmt.Sprintf(`^run %d: +1\talpha\n +1\tbeta\n +1\tgamma\n$`, i)
		if res.StopReason != loop.StopCompleted || res.Steps != 4 || res.ToolCalls != 3 || !regexp.MustCompile(want).MatchString(res.Output) || res.Session == "" {
			t.Errorf("run %d: %s after %d steps, %d calls, output %q, session %q; want completed after 4 steps, 3 calls, output matching %s",
				i, res.StopReason, res.Steps, res.ToolCalls, res.Output, res.Session, want)
			continue
		}
		// The session holds each step once.
		steps := sessionSteps(t, filepath.Join(dir, "data", "sessions", res.Session, "events.jsonl"))
		if fmt.Sprint(steps) != "[1 2 3 4]" {
			t.Errorf("run %d: session %s has step.start for steps %v, want [1 2 3 4]", i, res.Session, steps)
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	again := 0
	for k, bodies := range m.seen {
		for _, b := range bodies[1:] {
			again++
			if b != bodies[0] {
				t.Errorf("run %d step %d: the request was sent again and differs:\n%s\n%s", k.run, k.step, bodies[0], b)
			}
		}
	}
	for i := range runs {
		for s := 0; s <= len(e2eFiles); s++ {
			if len(m.seen[reqKey{i, s}]) == 0 {
				t.Errorf("run %d: no request for step %d", i, s+1)
			}
		}
	}
	if m.byWorker["b"] == 0 {
		t.Errorf("worker b served no request: %v", m.byWorker)
	}
	t.Logf("requests by worker %v; %d sent again after the kill", m.byWorker, again)
}

// sessionSteps lists the steps of the top-level step.start events of a
// session's events.
func sessionSteps(t *testing.T, path string) []int {
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("session: %v", err)
		return nil
	}
	defer f.Close()
	var steps []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev loop.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Errorf("session %s: %v", path, err)
			return nil
		}
		if ev.Type == loop.EventStepStart && ev.Depth == 0 {
			steps = append(steps, ev.Step)
		}
	}
	return steps
}

// scripted serves a script in order, reset between runs, and signals each
// request.
type scripted struct {
	mu      sync.Mutex
	replies []fakemodel.Reply
	next    int
	arrived chan struct{}
	last    []byte // the last request's body
}

func (s *scripted) reset(replies ...fakemodel.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.next = replies, 0
}

func (s *scripted) choose(body []byte, _ http.Header) fakemodel.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = body
	defer func() {
		select {
		case s.arrived <- struct{}{}:
		default:
		}
	}()
	if s.next >= len(s.replies) {
		return fakemodel.Reply{Status: 500, Body: json.RawMessage(`"script exhausted"`)}
	}
	s.next++
	return s.replies[s.next-1]
}

const likeLocalConfig = `host {
  data_dir = "./data"
}
provider "fake" {
  base_url = env("OPENAI_BASE_URL")
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
  prompt = "You are a test agent."
  tools  = ["read_file"]
}
agent "budget" {
  prompt = "You are a test agent."
  tools  = ["read_file"]
  budget = 1
}
agent "lead" {
  prompt    = "You lead."
  subagents = ["main"]
}
`

// agenthostIn runs agenthost in dir and returns its exit code, stdout and
// stderr.
func agenthostIn(t *testing.T, dir, modelURL string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("agenthost", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+modelURL, "AGENTHOST_CONFIG=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agenthost %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

// normalise drops what differs between two runs of the same scenario from
// --events lines and --json output: times, durations and session ids.
func normalise(t *testing.T, out string, jsonObject bool) string {
	strip := func(b []byte) string {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, b)
		}
		delete(m, "time")
		delete(m, "duration_ms")
		delete(m, "session")
		b, _ = json.Marshal(m)
		return string(b)
	}
	if jsonObject {
		return strip([]byte(out))
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strip([]byte(l)))
	}
	return strings.Join(lines, "\n")
}

// TestTemporalRunLikeLocal: run --temporal prints what a local run prints,
// as text, --json and --events, and exits with the same code; Ctrl-C and
// runs cancel abort a run (exit 130); runs list and show find it.
func TestTemporalRunLikeLocal(t *testing.T) {
	sc := &scripted{arrived: make(chan struct{}, 1)}
	addr, dir, srv := temporalE2E(t, map[string]string{"agents.hcl": likeLocalConfig, "f0.txt": "alpha", "f1.txt": "beta"}, sc.choose)
	startWorker(t, dir, addr, srv.URL(), "a")

	// Tool calls carry their ids: the ones the server makes up count its
	// replies, which differ between the two runs of a case.
	read := func(f string) fakemodel.ToolCall {
		return fakemodel.ToolCall{ID: "call_" + f, Name: "read_file", Arguments: json.RawMessage(`{"path":"` + f + `"}`)}
	}
	cases := []struct {
		name    string
		agent   string
		replies []fakemodel.Reply
		code    int
	}{
		{"completed", "main", []fakemodel.Reply{{ToolCalls: []fakemodel.ToolCall{read("f0.txt")}, Text: "Let me look."}, {Text: "Done: alpha."}}, 0},
		{"budget", "budget", []fakemodel.Reply{{ToolCalls: []fakemodel.ToolCall{read("f0.txt"), read("f1.txt")}}, {}}, 3},
		{"retry", "main", []fakemodel.Reply{{Status: 429, Headers: map[string]string{"retry-after-ms": "20"}}, {Text: "ok"}}, 0},
		{"provider_error", "main", []fakemodel.Reply{{Status: 400}}, 1},
		{"subagent", "lead", []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{ID: "call_sub", Name: "main", Arguments: json.RawMessage(`{"prompt":"look at f0.txt"}`)}}},
			{ToolCalls: []fakemodel.ToolCall{read("f0.txt")}},
			{Text: "sub done"},
			{Text: "lead done"},
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"", "--json", "--events"} {
				args := []string{"run", "-a", c.agent, "task"}
				if mode != "" {
					args = append(args, mode)
				}
				sc.reset(c.replies...)
				lcode, lout, lerr := agenthostIn(t, dir, srv.URL(), args...)
				sc.reset(c.replies...)
				tcode, tout, terr := agenthostIn(t, dir, srv.URL(), append(args, "--temporal", addr)...)
				if lcode != c.code || tcode != c.code {
					t.Errorf("%s: exit %d local, %d on Temporal; want %d\nlocal stderr: %s\nTemporal stderr: %s", mode, lcode, tcode, c.code, lerr, terr)
				}
				if mode != "" {
					lout, tout = normalise(t, lout, mode == "--json"), normalise(t, tout, mode == "--json")
				}
				if diff := cmp.Diff(lout, tout); diff != "" {
					t.Errorf("%s: output differs (-local +Temporal):\n%s", mode, diff)
				}
			}
		})
	}

	// A subagent's events reach the caller while it runs, not only when it
	// ends: its model request is held until its step.start was printed.
	// Then the run's events are those of a local run: none twice, none
	// missing.
	liveReplies := []fakemodel.Reply{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_sub", Name: "main", Arguments: json.RawMessage(`{"prompt":"wait"}`)}}},
		{ToolCalls: []fakemodel.ToolCall{read("f0.txt")}},
		{Text: "sub done", Hold: true},
		{Text: "lead done"},
	}
	sc.reset(liveReplies...)
	live := exec.Command("agenthost", "run", "-a", "lead", "--temporal", addr, "--events", "task")
	live.Dir = dir
	live.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "AGENTHOST_CONFIG=")
	pipe, err := live.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	var liveOut strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewScanner(pipe)
		once := sync.Once{}
		for lines.Scan() {
			liveOut.Write(append(lines.Bytes(), '\n'))
			var ev loop.Event
			if json.Unmarshal(lines.Bytes(), &ev) == nil && ev.Type == loop.EventStepStart && ev.Depth == 1 && ev.Step == 2 {
				once.Do(func() { close(seen) })
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(30 * time.Second): // only bounds a failure
		t.Errorf("the subagent's second step.start was not printed while the subagent ran")
	}
	srv.Release()
	<-done
	if err := live.Wait(); err != nil {
		t.Errorf("run with a held subagent: %v", err)
	}
	sc.reset(liveReplies...) // released: the hold no longer waits
	_, localOut, _ := agenthostIn(t, dir, srv.URL(), "run", "-a", "lead", "--events", "task")
	if diff := cmp.Diff(normalise(t, localOut, false), normalise(t, liveOut.String(), false)); diff != "" {
		t.Errorf("followed live, the events differ (-local +Temporal):\n%s", diff)
	}

	// Without a worker on the task queue, the run says so.
	lonely := exec.Command("agenthost", "run", "-a", "main", "--temporal", addr, "--task-queue", "nobody", "task")
	lonely.Dir = dir
	lonely.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "AGENTHOST_CONFIG=")
	lerr, err := lonely.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lonely.Start(); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(30*time.Second, func() { lonely.Process.Kill() }) // only bounds a failure
	defer stop.Stop()
	hinted := false
	var lonelyErr strings.Builder
	for lines := bufio.NewScanner(lerr); lines.Scan(); {
		lonelyErr.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), `is waiting for a worker on task queue "nobody" (start one: agenthost worker`) {
			hinted = true
			break
		}
	}
	lonely.Process.Kill()
	lonely.Wait()
	if !hinted {
		t.Errorf("run --temporal on a task queue without workers did not say so:\n%s", lonelyErr.String())
	}

	// A session started on Temporal is continued on Temporal as locally:
	// the same events, and the earlier answer in the request.
	var continued []string
	for _, where := range [][]string{nil, {"--temporal", addr}} {
		sc.reset(fakemodel.Reply{Text: "first answer"})
		code, out, errOut := agenthostIn(t, dir, srv.URL(), append([]string{"run", "-a", "main", "--json", "task"}, where...)...)
		var first loop.Result
		if err := json.Unmarshal([]byte(out), &first); code != 0 || err != nil || first.Session == "" {
			t.Fatalf("run %v: exit %d, %s %s", where, code, out, errOut)
		}
		sc.reset(fakemodel.Reply{Text: "second answer"})
		code, out, errOut = agenthostIn(t, dir, srv.URL(), append([]string{"run", "-a", "main", "--session", first.Session, "--events", "again"}, where...)...)
		if code != 0 || !bytes.Contains(sc.last, []byte("first answer")) {
			t.Errorf("continue %v: exit %d, request without the earlier answer: %s\n%s", where, code, sc.last, errOut)
		}
		continued = append(continued, normalise(t, out, false))
	}
	if diff := cmp.Diff(continued[0], continued[1]); diff != "" {
		t.Errorf("continued session: events differ (-local +Temporal):\n%s", diff)
	}

	// hanging starts a run whose model request hangs, waits for the
	// request, and returns the process and its workflow id (from the log).
	hanging := func() (*exec.Cmd, *bytes.Buffer, string) {
		sc.reset(fakemodel.Reply{Text: "thinking", Hang: true})
		cmd := exec.Command("agenthost", "run", "-a", "main", "--temporal", addr, "--json", "--log-level", "info", "task")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "AGENTHOST_CONFIG=")
		var stdout bytes.Buffer
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var id string
		var logged strings.Builder
		sc2 := bufio.NewScanner(stderr)
		for sc2.Scan() {
			logged.Write(append(sc2.Bytes(), '\n'))
			var l struct {
				Run string `json:"run"`
			}
			if json.Unmarshal(sc2.Bytes(), &l) == nil && l.Run != "" {
				id = l.Run
				break
			}
		}
		go io.Copy(io.Discard, stderr)
		if id == "" {
			cmd.Wait()
			t.Fatalf("run --temporal --log-level info logged no run id:\n%s%s", logged.String(), stdout.String())
		}
		<-sc.arrived
		return cmd, &stdout, id
	}
	aborted := func(how string, cmd *exec.Cmd, stdout *bytes.Buffer) {
		err := cmd.Wait()
		var res loop.Result
		_ = json.Unmarshal(stdout.Bytes(), &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitAborted || res.StopReason != loop.StopAborted {
			t.Errorf("%s: exit %v, stop reason %q; want 130 and aborted\n%s", how, err, res.StopReason, stdout)
		}
	}
	for range len(sc.arrived) {
		<-sc.arrived
	}

	cmd, stdout, id := hanging()
	cmd.Process.Signal(os.Interrupt)
	aborted("Ctrl-C", cmd, stdout)

	code, out, errOut := agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "list")
	if code != 0 || !regexp.MustCompile(`(?m)^`+id+` +main +completed `).MatchString(out) {
		t.Errorf("runs list: exit %d, %q does not list %s (agent main, completed)\n%s", code, out, id, errOut)
	}
	code, out, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "show", id, "--json")
	var shown runs.Info
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || shown.Agent != "main" || shown.Result == nil || shown.Result.StopReason != loop.StopAborted {
		t.Errorf("runs show: exit %d, %s\n%s", code, out, errOut)
	}
	code, _, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "cancel", "run-nope")
	if code != exitUsage || !strings.Contains(errOut, "no run") {
		t.Errorf("runs cancel of an unknown run: exit %d, %s", code, errOut)
	}

	cmd, stdout, id = hanging()
	code, out, errOut = agenthostIn(t, dir, srv.URL(), "runs", "--temporal", addr, "cancel", id)
	if code != 0 {
		t.Errorf("runs cancel: exit %d %s %s", code, out, errOut)
	}
	aborted("runs cancel", cmd, stdout)
}

// TestTemporalUsageErrors: the Temporal commands refuse bad input before
// they connect, saying what to do (exit 2).
func TestTemporalUsageErrors(t *testing.T) {
	if _, err := exec.LookPath("agenthost"); err != nil {
		t.Skip("agenthost is not on $PATH (run through go test, which puts it there)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agents.hcl"), []byte(likeLocalConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "worker needs a Temporal server: pass --temporal HOST:PORT or set address in a temporal block"},
		{[]string{"worker", "--temporal", "localhost"}, `--temporal "localhost": want HOST:PORT`},
		{[]string{"worker", "--temporal", "127.0.0.1:7233", "--concurrency", "-1"}, "--concurrency -1: use 0 for the default or a positive number"},
		{[]string{"worker", "--temporal", "127.0.0.1:7233", "--heartbeat", "10ms"}, "--heartbeat 10ms: use at least 1s"},
		{[]string{"runs", "--temporal", "127.0.0.1:7233", "show"}, "usage: agenthost runs --temporal HOST:PORT [list | show ID | cancel ID | approve ID [CALL] [--always] | deny ID [CALL] [--reason TEXT]]"},
		{[]string{"runs", "--temporal", "127.0.0.1:7233", "approve", "run-x", "--reason", "no"}, "runs approve: unknown flag: --reason (see 'agenthost runs approve --help')"},
		{[]string{"runs", "-c", "agents.hcl"}, "runs needs a Temporal server"},
		{[]string{"run", "--temporal", "127.0.0.1:7233", "--replay", "x.jsonl", "task"}, "--record and --replay cannot be used with --temporal"},
		{[]string{"run", "--temporal", "127.0.0.1:7233", "-a", "nobody", "task"}, `no agent "nobody" in agents.hcl; agents: budget, lead, main`},
	} {
		code, _, stderr := agenthostIn(t, dir, "http://127.0.0.1:1/v1", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("agenthost %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}
