package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/scenario"
	"github.com/agenthost/agenthost/internal/wasmbuild"
)

// The fan-out test: one model response asking for thousands of calls of a
// slow tool. Each call runs in a sandboxed plugin instance of its own, so
// the host's memory follows the number of calls running at once, which
// host.max_parallel_tools bounds.
const (
	fanOutCalls = 2000
	fanOutNapMS = 10
	// fanOutPeakMiB is the bound on agenthost's peak RSS: the process, the
	// compiled plugin, the response and the answers of all the calls, and
	// max_parallel_tools (8) instances at a time, with room to spare. A Go
	// guest's instance holds about 2.5 MiB, so calls without the bound pass
	// it with about a hundred in flight.
	fanOutPeakMiB = 256
)

const fanOutConfig = `host {
  data_dir           = "./data"
  max_calls_per_step = %d
}
provider "fake" {
  base_url = env("OPENAI_BASE_URL")
  retry {
    attempts = 1
  }
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
plugin "nap" {
  source = "nap.wasm"
  clock  = true
}
agent "main" {
  prompt = "You are a test agent."
  tools  = ["nap"]
  steps  = 3
}
`

// TestFanOutMemory: agenthost run given one response of 2000 calls of a
// tool that sleeps 10 ms (max_calls_per_step raised so that all of them
// run) keeps its peak RSS, read from /proc/PID/status (VmHWM) once every
// call has been answered, under fanOutPeakMiB, and every call gets its
// answer, in call order. The test watches VmRSS as it runs and kills a
// process that passes the bound, so that a host without the bound fails
// the test rather than exhausting the machine.
func TestFanOutMemory(t *testing.T) {
	longSuite(t)
	if testing.Short() {
		t.Skip("thousands of plugin calls; not in -short")
	}
	if _, err := exec.LookPath("agenthost"); err != nil {
		t.Skip("agenthost is not on $PATH (run through go test, which puts it there)")
	}
	dir := t.TempDir()
	if err := wasmbuild.Build(filepath.Join(dir, "nap.wasm"), filepath.Join("testdata", "nap")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents.hcl"), []byte(fmt.Sprintf(fanOutConfig, fanOutCalls)), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := make([]fakemodel.ToolCall, fanOutCalls)
	for i := range calls {
		calls[i] = fakemodel.ToolCall{ID: fmt.Sprintf("call%04d", i+1), Name: "nap", Arguments: json.RawMessage(fmt.Sprintf(`{"ms":%d,"i":%d}`, fanOutNapMS, i+1))}
	}
	// The second request carries every answer; its reply is held, so that
	// the process is still there to be measured.
	srv, err := fakemodel.Start([]fakemodel.Reply{{ToolCalls: calls}, {Text: "All napped.", Hold: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cache, err := host.ResolveCacheDir(os.Getenv("AGENTHOST_CACHE_DIR"))
	if err != nil {
		priv, err := scenario.PrivateTemp()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(priv, "wazero")
	}

	cmd := exec.Command("agenthost", "run", "--json", "Nap.")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "AGENTHOST_CONFIG=", "AGENTHOST_CACHE_DIR="+cache)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)

	// The guard: a process past the bound is killed at once.
	var over atomic.Int64 // the RSS in KiB that passed the bound, or 0
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if kib, err := procStatusKiB(status, "VmRSS"); err == nil && kib > fanOutPeakMiB<<10 {
				over.Store(kib)
				cmd.Process.Kill()
				return
			}
		}
	}()

	answered := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { answered <- srv.WaitRequests(ctx, 2) }()
	select {
	case err := <-exited:
		t.Fatalf("agenthost ended before answering the calls (%v; RSS past the bound: %d MiB)\nstdout:\n%s\nstderr:\n%s",
			err, over.Load()>>10, stdout.String(), tail(stderr.String(), 2000))
	case err := <-answered:
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("the calls were not answered within 2 minutes: %v", err)
		}
	}
	peak, err := procStatusKiB(status, "VmHWM")
	if err != nil {
		t.Fatalf("reading the peak RSS: %v", err)
	}
	srv.Release()
	if err := <-exited; err != nil {
		t.Fatalf("agenthost run: %v\nstderr:\n%s", err, tail(stderr.String(), 2000))
	}
	t.Logf("%d calls of a %d ms tool answered in %s; peak RSS %d MiB (bound %d MiB)",
		fanOutCalls, fanOutNapMS, time.Since(start).Round(100*time.Millisecond), peak>>10, fanOutPeakMiB)
	if n := over.Load(); n > 0 {
		t.Errorf("RSS reached %d MiB, past the bound of %d MiB", n>>10, fanOutPeakMiB)
	}
	if peak > fanOutPeakMiB<<10 {
		t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>10, fanOutPeakMiB)
	}

	var res struct {
		StopReason string `json:"stop_reason"`
		ToolCalls  int    `json:"tool_calls"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.StopReason != "completed" || res.ToolCalls != fanOutCalls {
		t.Errorf("result %+v (%v), want completed after %d tool calls", res, err, fanOutCalls)
	}
	// Every call was answered by the plugin, in call order.
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[1], &req); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		n++
		if want := fmt.Sprintf("napped %d ms (call %d)", fanOutNapMS, n); m.ToolCallID != fmt.Sprintf("call%04d", n) || m.Content != want {
			t.Fatalf("tool message %d answers %s with %q; want call%04d answered %q", n, m.ToolCallID, m.Content, n, want)
		}
	}
	if n != fanOutCalls {
		t.Errorf("%d tool messages, want %d", n, fanOutCalls)
	}
}

// procStatusKiB reads a "Name:   N kB" line of a /proc/PID/status file.
func procStatusKiB(path, name string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	}
	return 0, fmt.Errorf("%s: no %s line", path, name)
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
