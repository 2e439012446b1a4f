package temporal

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agenthost/agenthost/internal/filltest"
	"github.com/agenthost/agenthost/loop"
)

// dataFields are the indexes of loop.Agent's fields that are data: all
// but its behaviour (funcs and interfaces: model, tools, validator) and
// its subagents, which are agents themselves.
func dataFields() []int {
	var out []int
	t := reflect.TypeOf(loop.Agent{})
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Subagents" || f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Interface {
			continue
		}
		out = append(out, i)
	}
	return out
}

// fullAgent is an agent whose every data field, its Policy's nested ones
// included, is set to a value other than its zero.
func fullAgent(t *testing.T, name string) *loop.Agent {
	a := &loop.Agent{ValidateOutput: func(any) error { return nil }}
	v := reflect.ValueOf(a).Elem()
	for _, i := range dataFields() {
		if err := filltest.Fill(v.Field(i).Addr().Interface()); err != nil {
			t.Fatalf("loop.Agent's data must travel as JSON to durable runs: %v", err)
		}
	}
	a.Name = name
	return a
}

// TestSpecPolicy: what a worker describes of an agent (AgentSpec), after
// the JSON trip through Temporal, rebuilds in the workflow an agent with
// the same data, subagents included: every field of its Policy, and any
// data field loop.Agent gains, without a list here to keep up to date.
func TestSpecPolicy(t *testing.T) {
	top, sub := fullAgent(t, "main"), fullAgent(t, "helper")
	top.Subagents = []*loop.Agent{sub}
	acts := &Activities{Agents: fakeAgents{"main": top, "helper": sub}}
	b, err := json.Marshal(acts.describe(top))
	if err != nil {
		t.Fatal(err)
	}
	var spec AgentSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	st := &state{specs: map[*loop.Agent]*AgentSpec{}}
	got := st.agent(&spec)
	if len(got.Subagents) != 1 {
		t.Fatalf("rebuilt agent has %d subagents, want 1", len(got.Subagents))
	}
	for _, pair := range [][2]*loop.Agent{{top, got}, {sub, got.Subagents[0]}} {
		want, have := reflect.ValueOf(pair[0]).Elem(), reflect.ValueOf(pair[1]).Elem()
		for _, i := range dataFields() {
			if !reflect.DeepEqual(want.Field(i).Interface(), have.Field(i).Interface()) {
				t.Errorf("agent %s: %s does not reach the workflow:\nworker   %+v\nworkflow %+v", pair[0].Name, want.Type().Field(i).Name, want.Field(i).Interface(), have.Field(i).Interface())
			}
		}
		if pair[1].ValidateOutput == nil {
			t.Errorf("agent %s: the workflow has no output validator for the schema", pair[0].Name)
		}
	}
}

// TestSpecWire: AgentSpec's JSON keeps the flat form it had when it listed
// the policy's fields itself, so that a run in flight when workers are
// upgraded replays with its recorded description (docs/scale-out.md).
func TestSpecWire(t *testing.T) {
	recorded := `{"name":"main","description":"d","model_id":"m","context_window":1000,"system":"sys","steps_max":3,"budget":2,"tokens":100,"cost":0.5,` +
		`"price":{"Input":1,"Output":2,"CachedInput":0.5},"doom_threshold":4,"doom_action":"stop","final_step_tools":"none",` +
		`"retry":{"Attempts":2,"Initial":1000,"MaxDelay":2000},"prompts":{"MaxSteps":"ms"},"max_depth":2,"max_calls_per_step":5,` +
		`"approve":["gh__*"],"output_schema":{"type":"object"},"output_mode":"prompt","model_timeout":7}`
	var spec AgentSpec
	if err := json.Unmarshal([]byte(recorded), &spec); err != nil {
		t.Fatal(err)
	}
	want := loop.Policy{ContextWindow: 1000, System: "sys", StepsMax: 3, Budget: 2, Tokens: 100, Cost: 0.5,
		Price: &loop.Price{Input: 1, Output: 2, CachedInput: 0.5}, DoomThreshold: 4, DoomAction: loop.DoomStop,
		FinalStepTools: loop.FinalToolsNone, Retry: loop.RetryPolicy{Attempts: 2, Initial: 1000, MaxDelay: 2000},
		Prompts: loop.Prompts{MaxSteps: "ms"}, MaxDepth: 2, MaxCallsPerStep: 5, Approve: []string{"gh__*"},
		OutputSchema: json.RawMessage(`{"type":"object"}`), OutputMode: loop.OutputPrompt}
	if !reflect.DeepEqual(spec.Policy, want) || spec.Name != "main" || spec.ModelTimeout != 7 {
		t.Errorf("recorded spec decoded as %+v, want policy %+v", spec, want)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]json.RawMessage
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	if string(flat["steps_max"]) != "3" || flat["policy"] != nil || flat["Policy"] != nil {
		t.Errorf("AgentSpec encodes as %s; want the policy's fields at the top level", b)
	}
}
