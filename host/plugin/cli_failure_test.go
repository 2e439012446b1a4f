package plugin

import (
	"context"
	"encoding/json"
	"errors"
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

// TestCLIFailures: a wasi_cli guest that traps or spins ends in a Failure
// of that kind, never in an empty success.
func TestCLIFailures(t *testing.T) {
	cases := []struct {
		name string
		body string
		kind FailureKind
	}{
		{"trap", "\x00\x00\x0b", FailureTrap},                    // unreachable
		{"spin", "\x00\x03\x40\x0c\x00\x0b\x0b", FailureTimeout}, // loop br 0 end
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
			var f *Failure
			if !errors.As(err, &f) || f.Kind != tc.kind {
				t.Fatalf("got %+v, %v; want a %s failure", res, err, tc.kind)
			}
		})
	}
}
