package temporal

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agenthost/agenthost/loop"
)

func TestCapResult(t *testing.T) {
	if s := strings.Repeat("a", MaxToolResultBytes); capResult(s) != s {
		t.Errorf("a result of exactly the cap was changed")
	}
	s := strings.Repeat("é", MaxToolResultBytes) // 2 bytes each: the cap falls inside one
	got := capResult(s)
	kept, note, ok := strings.Cut(got, "\n[agenthost] output cut: ")
	if !ok || len(kept) > MaxToolResultBytes || len(kept) < MaxToolResultBytes-1 || !utf8.ValidString(kept) {
		t.Fatalf("kept %d bytes (valid UTF-8 %v), note found %v", len(kept), utf8.ValidString(kept), ok)
	}
	if !strings.Contains(note, "of 524288 bytes kept") {
		t.Errorf("note %q does not say how much was cut", note)
	}
}

// bigTools answers every call with n bytes.
type bigTools struct {
	*tools
	n int
}

func (b *bigTools) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Content: strings.Repeat("x", b.n)}, nil
}

// TestPayloadLimits: in a workflow a tool result is cut to
// MaxToolResultBytes before it enters the history, and a model request
// above MaxRequestBytes stops the run with error instead of failing the
// workflow.
func TestPayloadLimits(t *testing.T) {
	big := scenario{name: "big_result", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{}`)), text("done")}}
		b := one("main", m, nil, 5, nil)
		b.top.Tools = &bigTools{newTools("read"), MaxToolResultBytes + 1000}
		return b
	}}
	res, _, b := runWorkflow(t, big)
	reqs := b.models["main"].reqs
	if res.StopReason != loop.StopCompleted || len(reqs) != 2 {
		t.Fatalf("stop %s after %d requests", res.StopReason, len(reqs))
	}
	tm := reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(tm.Content) > MaxToolResultBytes+200 || !strings.Contains(tm.Content, "[agenthost] output cut: 262144 of 263144 bytes kept") {
		t.Errorf("tool result in the next request: %d bytes, ends %q", len(tm.Content), tm.Content[len(tm.Content)-120:])
	}

	huge := scenario{name: "huge_request", build: func() built {
		m := &scriptModel{script: []reply{text("never")}}
		return one("main", m, nil, 5, func(a *loop.Agent) { a.System = strings.Repeat("s", MaxRequestBytes) })
	}}
	res, _, b = runWorkflow(t, huge)
	if res.StopReason != loop.StopError || len(b.models["main"].reqs) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "more than the 1536 KiB") {
		t.Errorf("stop %s, %d requests sent, errors %q; want error, none sent, the limit named", res.StopReason, len(b.models["main"].reqs), res.Errors)
	}
}
