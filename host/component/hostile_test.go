package component

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStdout: what the guest writes to stdout is kept, not printed.
func TestStdout(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	out := mustCall(t, k, "hello", `{}`, nil)
	if string(out.Stdout) != "hello from wat\n" || string(out.JSON) != "null" {
		t.Fatalf("hello: stdout %q, result %s", out.Stdout, out.JSON)
	}
	if out := mustCall(t, k, "write-status", `{}`, nil); string(out.JSON) != `{"result":0}` {
		t.Fatalf("write-status = %s", out.JSON)
	}
}

// TestBogusHandles: resource handles the guest did not get, dropped,
// or got for another resource type trap; the host does not panic.
func TestBogusHandles(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	cases := []struct{ tool, msg string }{
		{"bogus-handle", "resource handle 9999 is not a live handle"},
		{"zero-handle", "resource handle 0 is not a live handle"},
		{"use-after-drop", "resource handle 1 is not a live handle"},
		{"double-drop", "resource handle 1 is not a live handle"},
		{"wrong-type", "resource handle 1 is a wasi:io/streams#input-stream, not a wasi:io/streams#output-stream"},
		{"bad-contents", "100 bytes at 4294967280 are out of bounds"},
	}
	for _, c := range cases {
		_, err := callTool(t, k, c.tool, `{}`, nil)
		f := failure(t, err, sandbox.FailureTrap)
		if f.Err.Error() != c.msg {
			t.Errorf("%s: %q, want %q", c.tool, f.Err, c.msg)
		}
	}
}

// TestMissingImport: an import the host does not provide traps when it is
// called, naming it, and Imports lists it as not provided.
func TestMissingImport(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	_, err := callTool(t, k, "missing-import", `{}`, nil)
	f := failure(t, err, sandbox.FailureTrap)
	if !strings.Contains(f.Err.Error(), "wasi:sockets/tcp@0.2.3#connect-somewhere, which agenthost does not provide") {
		t.Errorf("missing-import: %v", f.Err)
	}
	provided := map[string]bool{}
	for _, im := range k.Imports() {
		provided[im.Name] = im.Provided
	}
	if provided["wasi:sockets/tcp@0.2.3"] || !provided["wasi:io/streams@0.2.3"] || !provided["wasi:cli/stdout@0.2.3"] {
		t.Errorf("imports = %+v", k.Imports())
	}
}

// TestBadSignature: an import declared with another signature than the
// one agenthost implements traps when called, naming it; the host does
// not panic.
func TestBadSignature(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	_, err := callTool(t, k, "bad-signature", `{}`, nil)
	f := failure(t, err, sandbox.FailureTrap)
	want := "the component imports wasi:random/insecure@0.2.3#get-insecure-random-bytes as func(len: string) -> list<u8>, which is not the signature agenthost implements"
	if !strings.HasPrefix(f.Err.Error(), want) {
		t.Errorf("bad-signature: %v", f.Err)
	}
}

// TestConcurrentCalls: calls of one component run in parallel, each in
// its own instances.
func TestConcurrentCalls(t *testing.T) {
	k := loadTestdata(t, "abi.wasm", Options{})
	w := loadTestdata(t, "wasi.wasm", Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				s := fmt.Sprintf("g%d-%d", g, i)
				out, err := callTool(t, k, "echo-string", `{"s":"`+s+`"}`, nil)
				if err != nil || string(out.JSON) != `{"result":"`+s+`"}` {
					t.Errorf("echo-string(%s) = %v, %v", s, out, err)
					return
				}
				if out, err := callTool(t, w, "hello", `{}`, nil); err != nil || string(out.Stdout) != "hello from wat\n" {
					t.Errorf("hello = %v, %v", out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestSpin: a guest that never returns is stopped at the call's deadline.
func TestSpin(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := k.Call(ctx, "spin", nil, nil)
	failure(t, err, sandbox.FailureTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("spin stopped after %v", d)
	}
}

// TestMemoryBomb: a guest that grows its memory until it cannot stops at
// the limit and fails as a memory failure.
func TestMemoryBomb(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{MemoryLimitPages: 256})
	_, err := callTool(t, k, "bomb", `{}`, nil)
	f := failure(t, err, sandbox.FailureMemory)
	if !strings.Contains(f.Err.Error(), "256 pages") {
		t.Errorf("bomb: %v", f.Err)
	}
}

// TestOutputFlood: a guest that writes without end to stdout is stopped
// once it has written twice MaxOutput; the first MaxOutput bytes are kept.
func TestOutputFlood(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	_, err := callTool(t, k, "flood", `{}`, &Sandbox{MaxOutput: 10000})
	f := failure(t, err, sandbox.FailureOutput)
	if !strings.Contains(f.Err.Error(), "more than 20000 bytes") {
		t.Errorf("flood: %v", f.Err)
	}
}

// TestGrants: the environment, arguments, clock, randomness and config
// values are what the sandbox grants, and nothing without a grant.
func TestGrants(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{})
	none := &Sandbox{}
	want := func(sb *Sandbox, tool, args, json string) {
		t.Helper()
		if out := mustCall(t, k, tool, args, sb); string(out.JSON) != json {
			t.Errorf("%s(%s) = %s, want %s", tool, args, out.JSON, json)
		}
	}
	want(none, "environment", `{}`, `{"result":[]}`)
	want(none, "arguments", `{}`, `{"result":[]}`)
	// The fake clock is the modules' (sandbox.FakeClock): its first
	// reading is 2022-01-01T00:00:00Z.
	want(none, "wall-now", `{}`, `{"result":{"seconds":1640995200,"nanoseconds":0}}`)
	want(none, "config-get", `{"key":"base_url"}`, `{"result":{"ok":null}}`)
	// The fake random stream is the same on every call.
	a := mustCall(t, k, "random-u64", `{}`, none)
	b := mustCall(t, k, "random-u64", `{}`, none)
	if string(a.JSON) != string(b.JSON) {
		t.Errorf("fake random: %s then %s", a.JSON, b.JSON)
	}

	granted := &Sandbox{Env: []string{"LANG=C", "EMPTY="}, Args: []string{"tool", "--flag"}, RealClock: true, RealRandom: true,
		Config: map[string]string{"base_url": "http://example.test"}}
	want(granted, "environment", `{}`, `{"result":[["LANG","C"],["EMPTY",""]]}`)
	want(granted, "arguments", `{}`, `{"result":["tool","--flag"]}`)
	want(granted, "config-get", `{"key":"base_url"}`, `{"result":{"ok":"http://example.test"}}`)
	now := mustCall(t, k, "wall-now", `{}`, granted)
	var got struct{ Result struct{ Seconds int64 } }
	if err := json.Unmarshal(now.JSON, &got); err != nil {
		t.Fatal(err)
	}
	if d := time.Now().Unix() - got.Result.Seconds; d < 0 || d > 60 {
		t.Errorf("real wall clock = %s, now is %d", now.JSON, time.Now().Unix())
	}
	c := mustCall(t, k, "random-u64", `{}`, granted)
	d := mustCall(t, k, "random-u64", `{}`, granted)
	if string(c.JSON) == string(d.JSON) || string(c.JSON) == string(a.JSON) {
		t.Errorf("real random: %s then %s (fake gives %s)", c.JSON, d.JSON, a.JSON)
	}
}
