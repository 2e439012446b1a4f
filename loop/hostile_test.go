package loop

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// FuzzToolCalls feeds garbage tool calls to the loop: it must never panic,
// and the history must stay valid.
func FuzzToolCalls(f *testing.F) {
	f.Add("read_file", `{"path":"a"}`, "c1", "c1")
	f.Add("", "", "", "")
	f.Add("READ_FILE", `[`, "x", "x")
	f.Add("helper", `{"prompt":null}`, "1", "2")
	f.Add("helper", `{"prompt":"go"}`, "", "")
	f.Add("read_file\x00", "\xff\xfe", "ah0000001", "")
	f.Add("list_dir", `{"a":1,"a":2}`, "same", "same")
	f.Fuzz(func(t *testing.T, name, args, id1, id2 string) {
		child := &Agent{Name: "helper", Model: &fakeModel{script: []reply{text("child")}}, Policy: Policy{StepsMax: 1}}
		m := &fakeModel{script: []reply{
			calls("", tc(id1, name, args), tc(id2, name, args), tc(id1, name, args)),
			calls(name, tc(id2, name, args)),
			text("done"),
		}}
		a := testAgent(m, newTools("read_file", "list_dir"), 4)
		a.Subagents, a.Budget, a.DoomAction = []*Agent{child}, 3, DoomStop
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason == "" || res.ToolCalls > 3 {
			t.Errorf("stop %q, %d tool calls with a budget of 3", res.StopReason, res.ToolCalls)
		}
	})
}

func TestLogging(t *testing.T) {
	var buf bytes.Buffer
	ctx := zerolog.New(&buf).WithContext(context.Background())
	m := &fakeModel{script: []reply{
		calls("", tc("1", "Read_File", `{}`)),
		failure(503, true, 0),
		calls("", tc("2", "read_file", `{"n":2}`)),
	}}
	ts := newTools("read_file")
	ts.fn["read_file"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
		zerolog.Ctx(ctx).Info().Msg("the tool sees the run's logger")
		return ToolResult{Content: "x"}, nil
	}
	a := testAgent(m, ts, 2)
	r, _, _ := testRunner()
	res := r.Run(ctx, a, Input{Prompt: "task"})
	checkHistory(t, res.Messages)
	out := buf.String()
	for _, want := range []string{
		`"message":"run start"`, `"message":"tool name repaired (case-insensitive match)"`,
		`"message":"model request failed: retrying"`, `"message":"final step: tools disabled"`,
		`"message":"tool call dropped on the final step"`, `"message":"run end"`, `"stop_reason":"max_steps"`,
		`"agent":"main"`, `"message":"the tool sees the run's logger"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}
