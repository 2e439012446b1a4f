package mcpuse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/mcptest"
	"github.com/agenthost/agenthost/loop"
)

// The test binary is also the MCP server the tests use (package
// internal/mcptest): run with MCPUSE_SERVER=MODE set, it serves on
// stdin/stdout instead of running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPUSE_SERVER"); mode != "" {
		os.Exit(mcptest.Serve(mode))
	}
	os.Exit(m.Run())
}

func testServer(t *testing.T, mode string, timeout time.Duration, tools []string) *Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	s := New(Spec{
		Name:    "test",
		Command: []string{exe},
		Env:     map[string]string{"MCPUSE_SERVER": mode},
		Tools:   tools,
		Timeout: timeout,
		Stderr:  &lockedWriter{w: &stderr},
	}, zerolog.Nop())
	t.Cleanup(func() { s.Close() })
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func call(t *testing.T, s *Server, name, args string) loop.ToolResult {
	t.Helper()
	res, err := s.Call(context.Background(), loop.ToolCall{ID: "c", Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: error %v (want a result)", name, err)
	}
	return res
}

func TestListAndCall(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, []string{"echo", "fail"})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "echo" || tools[1].Name != "fail" || tools[0].Description != "Echo text." {
		t.Fatalf("tools = %+v", tools)
	}
	if !strings.Contains(string(tools[0].InputSchema), `"required":["text"]`) {
		t.Errorf("echo's schema = %s", tools[0].InputSchema)
	}
	if r := call(t, s, "echo", `{"text":"hi"}`); r.IsError || r.Content != `echo: "text":"hi"` {
		t.Errorf("echo = %+v", r)
	}
	if r := call(t, s, "fail", ``); !r.IsError || r.Content != "failed on purpose" {
		t.Errorf("fail = %+v", r)
	}
	if r := call(t, s, "echo", `{not json`); !r.IsError || !strings.Contains(r.Content, "not valid JSON") {
		t.Errorf("bad arguments = %+v", r)
	}
}

func TestAllowlistNamesMissingTool(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, []string{"echo", "nosuch"})
	_, err := s.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), `MCP server "test" has no tool "nosuch"; its tools are: `) {
		t.Fatalf("err = %v", err)
	}
}

// TestHangGivesErrorWithinTimeout: a call the server never answers is an
// error result once the timeout has passed; the server stays usable.
func TestHangGivesErrorWithinTimeout(t *testing.T) {
	s := testServer(t, "tools", 500*time.Millisecond, nil)
	call(t, s, "pid", "{}") // started
	start := time.Now()
	r := call(t, s, "hang", "{}")
	if !r.IsError || r.Content != `MCP server "test": tool "hang" gave no result within 500ms` {
		t.Errorf("hang = %+v", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("hang took %s", d)
	}
	if r := call(t, s, "echo", `{"text":"after"}`); r.IsError {
		t.Errorf("echo after a hang = %+v", r)
	}
}

// TestCrashRestartsOnce: a server that dies is restarted once (a new
// process answers), and not again after a second death.
func TestCrashRestartsOnce(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, nil)
	pid1 := call(t, s, "pid", "{}").Content
	if r := call(t, s, "crash", "{}"); !r.IsError || !strings.Contains(r.Content, `MCP server "test" stopped during the call of tool "crash"`) {
		t.Errorf("crash = %+v", r)
	}
	// The crash may be seen by the call before the session notices: wait
	// for the session to end, then call again.
	waitDead(t, s)
	pid2 := call(t, s, "pid", "{}")
	if pid2.IsError || pid2.Content == pid1 {
		t.Fatalf("after the crash: pid %+v, before %s (want a new process)", pid2, pid1)
	}
	call(t, s, "crash", "{}")
	waitDead(t, s)
	if r := call(t, s, "pid", "{}"); !r.IsError || !strings.Contains(r.Content, "after it was restarted once; it is not started again") {
		t.Errorf("after a second crash = %+v", r)
	}
}

// TestCallRightAfterCrash: a call made right after the server died, before
// its end was noticed, goes to the restarted server (it was never sent to
// the dead one), not an error.
func TestCallRightAfterCrash(t *testing.T) {
	for range 5 {
		s := testServer(t, "tools", 10*time.Second, nil)
		pid1 := call(t, s, "pid", "{}").Content
		call(t, s, "crash", "{}")
		if r := call(t, s, "pid", "{}"); r.IsError || r.Content == pid1 {
			t.Fatalf("the call after the crash = %+v (first server %s); want the pid of a new server", r, pid1)
		}
	}
}

// waitDead waits until the session's end has been noticed.
func waitDead(t *testing.T, s *Server) {
	t.Helper()
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the session's end was not noticed")
	}
}

// TestGarbageIsAnError: garbage on the server's stdout ends in an error
// result, not a panic or a hang.
func TestGarbageIsAnError(t *testing.T) {
	s := testServer(t, "tools", 2*time.Second, nil)
	if r := call(t, s, "garbage", "{}"); !r.IsError || !strings.Contains(r.Content, `MCP server "test"`) {
		t.Errorf("garbage = %+v", r)
	}
}

func TestGarbageOnStart(t *testing.T) {
	s := testServer(t, "garbage-init", 2*time.Second, nil)
	_, err := s.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), `MCP server "test" did not start`) {
		t.Fatalf("err = %v", err)
	}
}

func TestHangOnStart(t *testing.T) {
	s := testServer(t, "hang-init", 500*time.Millisecond, nil)
	start := time.Now()
	r := call(t, s, "echo", `{"text":"x"}`)
	if !r.IsError || !strings.Contains(r.Content, `MCP server "test" did not start within 500ms`) {
		t.Errorf("call = %+v", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, nil)
	var wg sync.WaitGroup
	errs := make([]string, 16)
	for i := range 16 {
		wg.Go(func() {
			r, err := s.Call(context.Background(), loop.ToolCall{Name: "echo", Arguments: fmt.Sprintf(`{"text":"%d"}`, i)})
			if err != nil || r.IsError || r.Content != fmt.Sprintf(`echo: "text":"%d"`, i) {
				errs[i] = fmt.Sprintf("%+v %v", r, err)
			}
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("call %d: %s", i, e)
		}
	}
}

// TestCloseStopsServer: Close ends the server process.
func TestCloseStopsServer(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, nil)
	pid, err := strconv.Atoi(call(t, s, "pid", "{}").Content)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if gone, known := processGone(pid); known && !gone {
		t.Errorf("server process %d still there after Close", pid)
	}
	if r := call(t, s, "pid", "{}"); !r.IsError || !strings.Contains(r.Content, "closing") {
		t.Errorf("call after Close = %+v", r)
	}
}

// TestCancelReachesServer: the server is told of a cancelled call
// (notifications/cancelled) before Call returns, so that closing the
// server right after (agenthost exiting on Ctrl-C) does not lose it.
func TestCancelReachesServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			for i := range 5 {
				record := filepath.Join(t.TempDir(), "record.txt")
				spec := Spec{Name: "test", Timeout: 10 * time.Second}
				if transport == "stdio" {
					spec.Command = []string{exe}
					spec.Env = map[string]string{"MCPUSE_SERVER": "tools", mcptest.RecordEnv: record}
				} else {
					hs, err := mcptest.StartHTTP("", record)
					if err != nil {
						t.Fatal(err)
					}
					defer hs.Close()
					spec.URL = hs.URL
				}
				s := New(spec, zerolog.Nop())
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					_, err := s.Call(ctx, loop.ToolCall{Name: "block", Arguments: "{}"})
					done <- err
				}()
				waitFor(t, record, "block started")
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				s.Close() // a stdio server: waits for the process to exit
				// Over HTTP the server answers the notification's POST
				// before it handles it: the record of its arrival is
				// what the client can be sure of.
				want := "notifications/cancelled: context canceled"
				if transport == "http" {
					want = "POST notifications/cancelled"
				}
				if b, _ := os.ReadFile(record); !strings.Contains(string(b), want) {
					t.Fatalf("try %d: the server did not receive notifications/cancelled; it recorded:\n%s", i, b)
				}
			}
		})
	}
}

// waitFor waits until the file holds text (a line the server wrote).
func waitFor(t *testing.T, file, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(file); strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not hold %q after 10s", file, text)
		}
		time.Sleep(5 * time.Millisecond) // polling a file another process writes
	}
}

// TestCancelledCall: a cancelled ctx returns its error (the loop counts the
// run as aborted), not a result.
func TestCancelledCall(t *testing.T) {
	s := testServer(t, "tools", 10*time.Second, nil)
	call(t, s, "pid", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, loop.ToolCall{Name: "hang", Arguments: "{}"})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
