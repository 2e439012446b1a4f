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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// The distributed mode against a real Temporal server: the Temporal CLI's
// dev server (in memory, on loopback), real agenthost worker processes,
// real runs of the builtin core plugin, and the fake model server. These
// tests skip when the temporal command is missing.

// e2eConfig is the agents.hcl of the end-to-end tests: the fake model
// (each worker names itself in a header), the core plugin reading the
// test's directory.
const e2eConfig = `host {
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

// TestTemporalWorkerKilled: two workers, 20 concurrent runs, one worker
// killed (SIGKILL) mid-run: every run completes on the other worker with
// the right result, each step counted once, and any request sent twice is
// the same request (an activity of the dead worker, retried).
func TestTemporalWorkerKilled(t *testing.T) {
	if _, err := exec.LookPath("agenthost"); err != nil {
		t.Skip("agenthost is not on $PATH (run through go test, which puts it there)")
	}
	addr := temporaltest.Start(t)
	dir := t.TempDir()
	files := map[string]string{"agents.hcl": e2eConfig}
	for i, c := range e2eFiles {
		files["f"+strconv.Itoa(i)+".txt"] = c
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 20
	m := &e2eModel{seen: map[reqKey][]string{}, byWorker: map[string]int{}, from: make(chan string, 4*runs*4)}
	srv, err := fakemodel.StartFunc(m.choose)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

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
