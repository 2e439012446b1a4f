package extism

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"maps"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/plugin/internal/notify"
	"github.com/agenthost/agenthost/loop"
)

// UserModuleName is the import module of hyper-mcp v2's host functions.
const UserModuleName = "extism:host/user"

// userFuncs are the hyper-mcp v2 host functions agenthost provides. Each
// takes and returns JSON in the shapes of hyper-mcp's PDK (MCP's own). The
// others hyper-mcp defines (list_roots, notify_resource_updated and the
// resource and prompt list_changed functions) are refused at load
// (UserRefused).
var userFuncs = map[string]hostFunc{
	"notify_tool_list_changed":     {nil, nil, func(c *Call, _ []uint64) { c.notifyToolsChanged() }},
	"notify_resource_list_changed": {nil, nil, func(c *Call, _ []uint64) { c.p.resourcesChanged.Store(true) }},
	"notify_prompt_list_changed":   {nil, nil, func(c *Call, _ []uint64) { c.p.promptsChanged.Store(true) }},
	"notify_resource_updated":      {p(i64), nil, func(c *Call, s []uint64) { c.resourceUpdated(s[0]) }},
	"notify_progress":              {p(i64), nil, func(c *Call, s []uint64) { c.notifyProgress(s[0]) }},
	"notify_logging_message":       {p(i64), nil, func(c *Call, s []uint64) { c.notifyLog(s[0]) }},
	"create_message": {p(i64), p(i64), func(c *Call, s []uint64) {
		s[0] = c.ask("create_message", "sampling", s[0], func(cc loop.CallClient, ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			return cc.CreateMessage(ctx, in)
		})
	}},
	"create_elicitation": {p(i64), p(i64), func(c *Call, s []uint64) {
		s[0] = c.ask("create_elicitation", "elicitation", s[0], func(cc loop.CallClient, ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			return cc.Elicit(ctx, elicitParams(in))
		})
	}},
}

// userKnown are hyper-mcp v2's host functions that agenthost refuses, with
// why.
var userKnown = map[string]string{
	"list_roots":                       "agenthost offers plugins no client roots",
	"notify_url_elicitation_completed": "agenthost does not pass URL-mode elicitation completions on to clients",
}

// UserRefused explains why agenthost does not provide the hyper-mcp host
// function name: a sentence to show with the load error.
func UserRefused(name string) string {
	provided := strings.Join(slices.Sorted(maps.Keys(userFuncs)), ", ")
	if why, ok := userKnown[name]; ok {
		return fmt.Sprintf("%s.%s is a hyper-mcp host function agenthost does not provide (%s); it provides %s", UserModuleName, name, why, provided)
	}
	return fmt.Sprintf("%s.%s is not a hyper-mcp host function agenthost knows; it provides %s", UserModuleName, name, provided)
}

// InstantiateUser adds the host module "extism:host/user" to rt and returns
// its functions by name.
func InstantiateUser(ctx context.Context, rt wazero.Runtime) (map[string]api.FunctionDefinition, error) {
	return instantiate(ctx, rt, UserModuleName, userFuncs)
}

// SetClient sets what the call's progress, logs and requests go to (nil:
// progress and logs go to the report or the host's log, requests fail).
func (c *Call) SetClient(cc loop.CallClient) {
	c.client = cc
	c.notes.Set(cc, c.report)
}

// SetReport sets where the call's progress and logs become run events
// (the loop's CallReport; nil outside a run). They go there and to the
// client, or, with neither, to the host's log.
func (c *Call) SetReport(r loop.CallReport) {
	c.report = r
	c.notes.Set(c.client, r)
}

// notifyToolsChanged marks the plugin's tools as changed: the host lists
// them again (list_tools) before it next offers them (TakeToolsChanged).
// Marking is idempotent, so a plugin calling it in a loop costs nothing
// more than one listing.
func (c *Call) notifyToolsChanged() {
	if !c.p.toolsChanged.Swap(true) {
		c.log.Info().Str("plugin", c.p.name).Msg("the plugin said its tools changed (notify_tool_list_changed): they are listed again before the next step")
	}
}

// maxPendingUpdates bounds the resource updates a plugin keeps until they
// are sent (TakeResourceUpdates); past it, updates are dropped.
const maxPendingUpdates = 100

// resourceUpdated keeps the URI of a notify_resource_updated for
// TakeResourceUpdates.
func (c *Call) resourceUpdated(off uint64) {
	var n struct {
		URI string `json:"uri"`
	}
	b := c.block(off)
	if err := json.Unmarshal(b, &n); err != nil || n.URI == "" {
		c.fail(fmt.Errorf("notify_resource_updated: not a resource update with a uri: %s", notify.Cut(sandbox.ValidUTF8(b), 200)))
	}
	if !c.notes.Count("notify_resource_updated") {
		return
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if len(c.p.updated) >= maxPendingUpdates || slices.Contains(c.p.updated, n.URI) {
		return
	}
	c.p.updated = append(c.p.updated, n.URI)
}

// TakeResourceUpdates returns the URIs the plugin said were updated
// (notify_resource_updated) since the last call, at most 100, and forgets
// them.
func (p *Plugin) TakeResourceUpdates() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.updated
	p.updated = nil
	return u
}

// TakeListsChanged reports whether a call said the plugin's resources
// (notify_resource_list_changed) or prompts (notify_prompt_list_changed)
// changed since the last call, and clears the marks.
func (p *Plugin) TakeListsChanged() (resources, prompts bool) {
	return p.resourcesChanged.Swap(false), p.promptsChanged.Swap(false)
}

// TakeToolsChanged reports whether a call said the plugin's tools changed
// since the last TakeToolsChanged, and clears the mark.
func (p *Plugin) TakeToolsChanged() bool { return p.toolsChanged.Swap(false) }

// ToolsChanged reports, without clearing it, whether a call said the
// plugin's tools changed.
func (p *Plugin) ToolsChanged() bool { return p.toolsChanged.Load() }

func (c *Call) notifyProgress(off uint64) {
	var n struct {
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total"`
		Message  *string  `json:"message"`
	}
	b := c.block(off)
	if err := json.Unmarshal(b, &n); err != nil {
		c.fail(fmt.Errorf("notify_progress: not a progress notification (%v)", err))
	}
	c.notes.Progress("notify_progress", n.Progress, n.Total, n.Message)
}

func (c *Call) notifyLog(off uint64) {
	var n struct {
		Level  string          `json:"level"`
		Logger *string         `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	b := c.block(off)
	if err := json.Unmarshal(b, &n); err != nil || !notify.Level(n.Level) {
		c.fail(fmt.Errorf("notify_logging_message: not a logging message with an MCP level (debug … emergency): %s", notify.Cut(sandbox.ValidUTF8(b), 200)))
	}
	c.notes.Log("notify_logging_message", n.Level, n.Logger, n.Data)
}

// errNoClient is the refusal of a request made where no MCP client can
// answer it.
var errNoClient = errors.New("no MCP client to ask: the call does not come from `agenthost mcp serve`")

// ask sends the guest's request at off to the call's client and returns
// the offset of its answer. A refusal stops the guest with a message that
// says what it asked for.
func (c *Call) ask(fn, what string, off uint64, do func(loop.CallClient, context.Context, json.RawMessage) (json.RawMessage, error)) uint64 {
	in := c.block(off)
	if !json.Valid(in) {
		c.fail(fmt.Errorf("%s: its request is not JSON", fn))
	}
	if c.client == nil {
		c.fail(fmt.Errorf("%s (%s): %w", fn, what, errNoClient))
	}
	out, err := do(c.client, c.ctx, append(json.RawMessage(nil), in...))
	if err != nil {
		c.fail(fmt.Errorf("%s (%s): %w", fn, what, err))
	}
	return c.write(out)
}

// elicitParams drops hyper-mcp's timeout from an elicitation request:
// MCP's elicitation/create has none (the call's own timeout applies).
func elicitParams(in json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(in, &m) != nil {
		return in
	}
	if _, ok := m["timeout"]; !ok {
		return in
	}
	delete(m, "timeout")
	b, _ := json.Marshal(m)
	return b
}
