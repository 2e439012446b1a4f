package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/loop"
)

// scripted is a fake model answering from a list, in order.
type scripted struct {
	mu        sync.Mutex
	responses []loop.Response
	errs      []error
	calls     int
}

func (s *scripted) Stream(_ context.Context, _ loop.Request, onText func(string)) (loop.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.calls
	s.calls++
	if i < len(s.errs) && s.errs[i] != nil {
		return loop.Response{}, s.errs[i]
	}
	r := s.responses[i]
	if onText != nil {
		// Stream in two pieces, as a real provider would.
		half := len(r.Message.Content) / 2
		onText(r.Message.Content[:half])
		onText(r.Message.Content[half:])
	}
	return r, nil
}

var tools = []loop.ToolSpec{
	{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "list_dir", Description: "List a directory", InputSchema: json.RawMessage(`{"type": "object"}`)},
}

func firstRequest(system string) loop.Request {
	return loop.Request{
		Messages: []loop.Message{
			{Role: loop.RoleSystem, Content: system},
			{Role: loop.RoleUser, Content: "Summarise a.txt"},
		},
		Tools: tools,
	}
}

// secondRequest continues the first with the tool round, using the given
// call ids and extras.
func secondRequest(system, id1, id2, extra string) loop.Request {
	r := firstRequest(system)
	r.Messages = append(r.Messages,
		loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{
			{ID: id1, Name: "read_file", Arguments: `{"path":"a.txt"}`, Extra: json.RawMessage(extra)},
			{ID: id2, Name: "list_dir", Arguments: `{}`},
		}},
		loop.Message{Role: loop.RoleTool, ToolCallID: id1, Name: "read_file", Content: "alpha\nbeta"},
		loop.Message{Role: loop.RoleTool, ToolCallID: id2, Name: "list_dir", Content: "a.txt", IsError: true},
	)
	r.ToolChoice = loop.ToolChoiceNone
	return r
}

var responses = []loop.Response{
	{
		Message: loop.Message{Role: loop.RoleAssistant, Content: "Let me look.", Reasoning: "need the file", ToolCalls: []loop.ToolCall{
			{ID: "wire_A", Name: "read_file", Arguments: `{"path":"a.txt"}`, Extra: json.RawMessage(`{"sig":"s1"}`)},
			{ID: "wire_B", Name: "list_dir", Arguments: `{}`},
		}},
		FinishReason: "tool_calls",
		Usage:        loop.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120},
	},
	{
		Message:      loop.Message{Role: loop.RoleAssistant, Content: "a.txt says alpha, beta."},
		FinishReason: "stop",
		Usage:        loop.Usage{PromptTokens: 150, CompletionTokens: 9, TotalTokens: 159},
	},
}

// record writes a cassette of the two-step conversation and returns its path.
func record(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "deep", "dir", "run.cassette")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	m := rec.Wrap("gpt-test", &scripted{responses: responses})
	var text strings.Builder
	for i, req := range []loop.Request{firstRequest("You are terse."), secondRequest("You are terse.", "wire_A", "wire_B", `{"sig":"s1"}`)} {
		got, err := m.Stream(context.Background(), req, func(s string) { text.WriteString(s) })
		if err != nil {
			t.Fatalf("record request %d: %v", i+1, err)
		}
		if d := cmp.Diff(responses[i], got); d != "" {
			t.Fatalf("recording changed response %d (-want +got):\n%s", i+1, d)
		}
	}
	if text.String() != "Let me look.a.txt says alpha, beta." {
		t.Errorf("onText while recording got %q", text.String())
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRecordReplay(t *testing.T) {
	path := record(t)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("cassette mode %v, want 0600", perm)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 2 {
		t.Fatalf("cassette holds %d entries, want 2", p.Len())
	}
	m := p.Wrap("gpt-test")
	for i, req := range []loop.Request{firstRequest("You are terse."), secondRequest("You are terse.", "wire_A", "wire_B", `{"sig":"s1"}`)} {
		var pieces []string
		got, err := m.Stream(context.Background(), req, func(s string) { pieces = append(pieces, s) })
		if err != nil {
			t.Fatalf("replay request %d: %v", i+1, err)
		}
		if d := cmp.Diff(responses[i], got); d != "" {
			t.Errorf("replayed response %d (-want +got):\n%s", i+1, d)
		}
		if len(pieces) != 1 || pieces[0] != responses[i].Message.Content {
			t.Errorf("onText pieces %q, want the content in one piece", pieces)
		}
	}
}

func TestReplayIgnoresCallIDsAndExtras(t *testing.T) {
	p, err := Load(record(t))
	if err != nil {
		t.Fatal(err)
	}
	req := secondRequest("You are terse.", "call_9f8e", "call_0000", `{"sig":"different"}`)
	got, err := p.Wrap("gpt-test").Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("ids-only change missed: %v", err)
	}
	if d := cmp.Diff(responses[1], got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A schema with other spacing and key order is the same tool.
	req = firstRequest("You are terse.")
	req.Tools = []loop.ToolSpec{tools[0], tools[1]}
	req.Tools[0].InputSchema = json.RawMessage("{\"properties\": {\"path\": {\"type\": \"string\"}},\n \"type\": \"object\"}")
	if _, err := p.Wrap("gpt-test").Stream(context.Background(), req, nil); err != nil {
		t.Errorf("reformatted schema missed: %v", err)
	}
}

// miss replays req and returns the miss error's message.
func miss(t *testing.T, p *Player, model string, req loop.Request) string {
	t.Helper()
	_, err := p.Wrap(model).Stream(context.Background(), req, nil)
	var pe *loop.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want *loop.ProviderError", err, err)
	}
	if pe.Code != "cassette_miss" || pe.Retryable || pe.Status != 0 || !errors.Is(err, ErrMiss) {
		t.Errorf("miss error %+v", pe)
	}
	var me *MissError
	if !errors.As(err, &me) || me.Model != model {
		t.Errorf("miss error wraps %#v, want a *MissError for model %q", pe.Err, model)
	}
	return pe.Message
}

// TestMissNamesModels: a miss says which model the request was for and
// which the nearest recorded request was for, so the command line can
// explain a miss that comes from the model's name; an empty cassette has
// no recorded model.
func TestMissNamesModels(t *testing.T) {
	p, err := Load(record(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Wrap("other-model").Stream(context.Background(), firstRequest("You are terse."), nil)
	var me *MissError
	if !errors.As(err, &me) || me.Model != "other-model" || me.Recorded != "gpt-test" {
		t.Errorf("miss for another model: %#v (%v)", me, err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = Load(empty); err != nil {
		t.Fatal(err)
	}
	_, err = p.Wrap("gpt-test").Stream(context.Background(), firstRequest("You are terse."), nil)
	if !errors.As(err, &me) || me.Model != "gpt-test" || me.Recorded != "" {
		t.Errorf("miss on an empty cassette: %#v (%v)", me, err)
	}
}

func TestMissDiffs(t *testing.T) {
	path := record(t)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fewerTools := secondRequest("You are terse.", "a", "b", "")
	fewerTools.Tools = tools[:1]
	fewerTools.ToolChoice = ""
	newSchema := firstRequest("You are terse.")
	newSchema.Tools = []loop.ToolSpec{tools[0], {Name: "list_dir", Description: "List a directory", InputSchema: json.RawMessage(`{"type":"object","required":["path"]}`)}}
	longer := secondRequest("You are terse.", "a", "b", "")
	longer.Messages = append(longer.Messages, loop.Message{Role: loop.RoleUser, Content: "And b.txt?"})
	changedTool := secondRequest("You are terse.", "a", "b", "")
	changedTool.Messages[3].Content = "alpha\nGAMMA"

	cases := []struct {
		name  string
		model string
		req   loop.Request
		want  []string
	}{
		{"system prompt", "gpt-test", firstRequest("You are verbose."), []string{
			"cassette miss: " + path + " holds no response for this request (model \"gpt-test\", 2 messages, key ",
			"nearest recorded request: entry at line 1, 0 of 2 messages in common",
			"message 1 (system) differs:\n  - You are terse.\n  + You are verbose.",
		}},
		{"system prompt, longer request", "gpt-test", secondRequest("You are verbose.", "a", "b", ""), []string{
			"nearest recorded request: entry at line 2, 0 of 5 messages in common",
			"message 1 (system) differs:\n  - You are terse.\n  + You are verbose.",
		}},
		{"tool result", "gpt-test", changedTool, []string{
			"3 of 5 messages in common",
			"message 4 (tool) differs:\n    alpha\n  - beta\n  + GAMMA",
		}},
		{"tools and choice", "gpt-test", fewerTools, []string{
			"line 2, 5 of 5 messages in common",
			"tools differ: recorded [read_file,list_dir], got [read_file]",
			`tool_choice differs: recorded "none", got ""`,
		}},
		{"schema", "gpt-test", newSchema, []string{
			`tool list_dir: input_schema differs: recorded {"type":"object"}, got {"required":["path"],"type":"object"}`,
		}},
		{"extra message", "gpt-test", longer, []string{
			"5 of 6 messages in common",
			"message 6 (user) is new: the recorded request has 5 messages:\n  + And b.txt?",
		}},
		{"fewer messages", "gpt-test", loop.Request{Messages: firstRequest("You are terse.").Messages[:1], Tools: tools}, []string{
			"the recorded request has 2 messages, this one 1; recorded message 2 (user) is missing",
		}},
		{"model", "other-model", firstRequest("You are terse."), []string{
			`model differs: recorded "gpt-test", got "other-model"`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := miss(t, p, c.model, c.req)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("miss message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestMissMessageIsCapped(t *testing.T) {
	path := record(t)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat(strings.Repeat("x", 500)+"\n", 50)
	msg := miss(t, p, "gpt-test", firstRequest(long))
	if len(msg) > messageSize+10 {
		t.Errorf("miss message is %d bytes, want at most %d", len(msg), messageSize+10)
	}
	if !strings.Contains(msg, "more lines]") || !strings.Contains(msg, "x…") {
		t.Errorf("long diff not capped:\n%s", msg)
	}
}

func TestRepeatedRequestsServedInOrderThenLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	resp := func(text, id string) loop.Response {
		return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: text, ToolCalls: []loop.ToolCall{{ID: id, Name: "list_dir", Arguments: "{}"}}}}
	}
	m := rec.Wrap("m", &scripted{responses: []loop.Response{resp("one", "c1"), resp("two", "c2")}})
	req := firstRequest("sys")
	for range 2 {
		if _, err := m.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close()
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	play := p.Wrap("m")
	var got []string
	for range 4 {
		r, err := play.Stream(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Message.Content+"/"+r.Message.ToolCalls[0].ID)
	}
	if want := "one/c1 two/c2 two/c2_r1 two/c2_r2"; strings.Join(got, " ") != want {
		t.Errorf("served %q, want %q", strings.Join(got, " "), want)
	}
}

func TestConcurrentRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	const agents, steps = 4, 5
	var wg sync.WaitGroup
	for a := range agents {
		rs := make([]loop.Response, steps)
		for i := range rs {
			rs[i] = loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: fmt.Sprintf("agent %d step %d", a, i)}}
		}
		m := rec.Wrap(fmt.Sprintf("model-%d", a), &scripted{responses: rs})
		wg.Go(func() {
			for i := range steps {
				if _, err := m.Stream(context.Background(), firstRequest(fmt.Sprintf("step %d", i)), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != agents*steps {
		t.Fatalf("cassette holds %d entries, want %d", p.Len(), agents*steps)
	}
	for a := range agents {
		r, err := p.Wrap(fmt.Sprintf("model-%d", a)).Stream(context.Background(), firstRequest("step 3"), nil)
		if err != nil || r.Message.Content != fmt.Sprintf("agent %d step 3", a) {
			t.Errorf("agent %d: %q %v", a, r.Message.Content, err)
		}
	}
}

func TestFailuresAreNotRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	fail := &loop.ProviderError{Status: 429, Message: "slow down", Retryable: true}
	m := rec.Wrap("m", &scripted{responses: []loop.Response{{}, responses[0], responses[1]}, errs: []error{fail}})
	if _, err := m.Stream(context.Background(), firstRequest("s"), nil); !errors.Is(err, fail) {
		t.Errorf("error %v, want the inner error unchanged", err)
	}
	if _, err := m.Stream(context.Background(), firstRequest("s"), nil); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(context.Background(), firstRequest("s"), nil); err == nil || !strings.Contains(err.Error(), "recorder closed") {
		t.Errorf("record after Close: %v", err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 1 {
		t.Errorf("cassette holds %d entries, want only the success", p.Len())
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(record(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	torn := write("torn", lines[0]+lines[1][:40])
	p, err := Load(torn)
	if err != nil || p.Len() != 1 {
		t.Errorf("torn last line: %v, %d entries, want 1", err, p.Len())
	}
	bad := write("bad", lines[0]+"{not json\n"+lines[1])
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad+" line 2") {
		t.Errorf("bad middle line: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty, err := Load(write("empty", ""))
	if err != nil {
		t.Fatal(err)
	}
	if msg := miss(t, empty, "m", firstRequest("s")); !strings.Contains(msg, "the cassette holds no entries") {
		t.Errorf("empty cassette miss: %s", msg)
	}
	// A hand edit of a recorded request changes what it matches.
	edited := write("edited", strings.Replace(lines[0], "You are terse.", "You are kind.", 1))
	p, err = Load(edited)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wrap("gpt-test").Stream(context.Background(), firstRequest("You are kind."), nil); err != nil {
		t.Errorf("edited request missed: %v", err)
	}
}

func TestReplayHonoursCancellation(t *testing.T) {
	p, err := Load(record(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wrap("gpt-test").Stream(ctx, firstRequest("You are terse."), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestReplayedResponsesAreCopies(t *testing.T) {
	p, err := Load(record(t))
	if err != nil {
		t.Fatal(err)
	}
	m := p.Wrap("gpt-test")
	r, _ := m.Stream(context.Background(), firstRequest("You are terse."), nil)
	r.Message.ToolCalls[0].Name = "mutated"
	r.Message.ToolCalls[0].Extra[2] = 'X'
	r, _ = m.Stream(context.Background(), firstRequest("You are terse."), nil)
	if r.Message.ToolCalls[0].Name != "read_file" || string(r.Message.ToolCalls[0].Extra) != `{"sig":"s1"}` {
		t.Errorf("a caller's mutation leaked into the cassette: %+v", r.Message.ToolCalls[0])
	}
}
