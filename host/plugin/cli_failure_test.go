package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// startModule is a WASI command with no imports and no memory whose _start
// runs body (a function body: local declarations, code, end).
func startModule(body string) []byte {
	code := "\x01" + string(rune(len(body))) + body
	return []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type: func()
		"\x03\x02\x01\x00" + // function 0 of that type
		"\x07\x0a\x01\x06_start\x00\x00" + // export _start
		"\x0a" + string(rune(len(code))) + code)
}

// TestCLIFailures: a wasi_cli guest that traps or spins ends in a sandbox.Failure
// of that kind, never in an empty success.
func TestCLIFailures(t *testing.T) {
	cases := []struct {
		name string
		body string
		kind sandbox.FailureKind
	}{
		{"trap", "\x00\x00\x0b", sandbox.FailureTrap},                    // unreachable
		{"spin", "\x00\x03\x40\x0c\x00\x0b\x0b", sandbox.FailureTimeout}, // loop br 0 end
	}
	r := newRuntime(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, r, Spec{
				Name:   tc.name,
				Wasm:   startModule(tc.body),
				Kind:   KindWASICLI,
				Limits: Limits{Timeout: 200 * time.Millisecond},
				Tools: []CLITool{{
					Name:    "run",
					Command: func(json.RawMessage) ([]string, []byte, error) { return []string{tc.name}, nil, nil },
				}},
			})
			res, err := p.Call(context.Background(), loop.ToolCall{ID: "c", Name: "run", Arguments: "{}"})
			var f *sandbox.Failure
			if !errors.As(err, &f) || f.Kind != tc.kind {
				t.Fatalf("got %+v, %v; want a %s failure", res, err, tc.kind)
			}
		})
	}
}

// TestCommandPanics: a panic while a call's arguments become a command
// line (wasi_cli) or an input (Extism) is an error result for that call;
// the host goes on, and the next call works.
func TestCommandPanics(t *testing.T) {
	r := newRuntime(t)
	boom := func(args json.RawMessage) ([]string, []byte, error) {
		if string(args) == `{"text":"boom"}` {
			panic("multiple attributes that normalize to \"x\"")
		}
		return []string{"run"}, []byte("ok"), nil
	}
	cli := load(t, r, Spec{
		Name: "cli", Wasm: startModule("\x00\x0b"), Kind: KindWASICLI,
		Limits: Limits{Timeout: 5 * time.Second},
		Tools:  []CLITool{{Name: "run", Command: boom}},
	})
	vowels := inputTool("count_vowels", "")
	vowels.Command = boom
	ext := load(t, r, extismSpec(t, "vowels", sdkWasm(t, "count_vowels.wasm"), vowels))
	for _, c := range []struct {
		p    *Plugin
		tool string
	}{{cli, "run"}, {ext, "count_vowels"}} {
		res := mustCall(t, c.p, c.tool, `{"text":"boom"}`)
		if !res.IsError || !strings.Contains(res.Content, "host panic while reading the arguments") {
			t.Errorf("%s with a panicking command: %+v", c.tool, res)
		}
		if res := mustCall(t, c.p, c.tool, `{"text":"fine"}`); res.IsError {
			t.Errorf("%s after the panic: %+v", c.tool, res)
		}
	}
}
