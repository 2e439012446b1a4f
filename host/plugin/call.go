package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/internal/argcount"
	"github.com/agenthost/agenthost/internal/jsonenc"
	"github.com/agenthost/agenthost/loop"
)

// Checked is a call of one of a plugin's tools whose arguments passed the
// tool's schema (Plugin.Check), ready for Plugin.CallChecked. It is valid
// only for the plugin that made it.
type Checked struct {
	p    *Plugin
	t    *tool
	call loop.ToolCall
	// args is the arguments' text, trimmed: what the plugin receives.
	args json.RawMessage
}

// Check validates call's arguments against the schema of the plugin's
// tool call.Name without running the plugin. args is call.Arguments
// decoded, numbers as json.Number (as loop.ParseArguments and
// jsonschema.UnmarshalJSON decode it): Check validates it and does not
// decode the text again. It returns the checked call and "", or the
// reason the call is refused (the text of the error result Call would
// give).
func (p *Plugin) Check(call loop.ToolCall, args any) (Checked, string) {
	t, msg := p.tool(call.Name)
	if msg != "" {
		return Checked{}, msg
	}
	return p.check(t, call, args)
}

func (p *Plugin) check(t *tool, call loop.ToolCall, args any) (Checked, string) {
	if msg := t.validate(args); msg != "" {
		return Checked{}, msg
	}
	raw := strings.TrimSpace(call.Arguments)
	if raw == "" {
		raw = "{}"
	}
	return Checked{p: p, t: t, call: call, args: json.RawMessage(raw)}, ""
}

// tool finds the tool called name, or says the plugin has none.
func (p *Plugin) tool(name string) (*tool, string) {
	tab := p.table()
	if t, ok := tab.byName[name]; ok {
		return t, ""
	}
	names := make([]string, len(tab.specs))
	for i, s := range tab.specs {
		names[i] = s.Name
	}
	return nil, fmt.Sprintf("plugin %q has no tool %q; its tools are: %s", p.name, name, strings.Join(names, ", "))
}

// Call runs one call: Check, after decoding the arguments, then
// CallChecked. Arguments that are not JSON or fail the tool's schema give
// an error result without running the plugin.
func (p *Plugin) Call(ctx context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	t, msg := p.tool(call.Name)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	args, msg := decodeArgs(call)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	c, msg := p.check(t, call, args)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	return p.CallChecked(ctx, c)
}

// CallChecked runs a call Check admitted, without decoding or validating
// its arguments again: a fresh sandboxed instance (possibly pre-started,
// or reused) serves the call: exit 0 gives a result, exit 1 an error
// result (IsError); a trap, timeout, other exit code or output flood
// gives a *sandbox.Failure. CallChecked never panics on guest behaviour.
func (p *Plugin) CallChecked(ctx context.Context, c Checked) (loop.ToolResult, error) {
	t := c.t
	if c.p != p {
		return errResult("plugin %q: call %q was not checked by this plugin", p.name, c.call.Name), nil
	}
	if p.r.isClosed() {
		return loop.ToolResult{}, &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: sandbox.FailureStart, Err: errClosed}
	}
	if err := ctx.Err(); err != nil {
		return loop.ToolResult{}, &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: sandbox.FailureCanceled, Err: context.Cause(ctx)}
	}
	start := time.Now()
	res, err := t.call(ctx, t, c.call, c.args)
	p.logCall(ctx, t, start, res, err)
	return res, err
}

// callAgenthost runs a call of an agenthost plugin's tool: in the reused
// instance of a reuse plugin, else in the tool's pre-started instance when
// there is one, else in a fresh one.
func (p *Plugin) callAgenthost(ctx context.Context, t *tool, call loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	stdin := appendRequest(make([]byte, 0, 64+len(args)+len(call.ID)), t.spec.Name, args, call.ID)
	if p.ah.reuse {
		return p.callReuse(ctx, t, stdin)
	}
	i := p.takeWarm(ctx, t)
	if i != nil {
		i.notes.Set(loop.CallClientFrom(ctx), loop.CallReportFrom(ctx)) // started before the call
		i.serve(ctx, stdin, p.limits.Timeout)
	} else {
		i = newInstance(ctx, p.r, p.mod, t.cfg, p.limits, p.grants, p.mounts).takeNotes(ctx, p.name, *zerolog.Ctx(ctx))
		i.runCold(ctx, stdin, p.limits.Timeout)
	}
	p.refill(t)
	return p.result(ctx, t, i)
}

// callCLI runs a call of a wasi_cli plugin's tool in a fresh instance
// with the command line and stdin its CLITool builds.
func (p *Plugin) callCLI(ctx context.Context, t *tool, _ loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	argv, stdin, err := t.cli.command(args)
	if err != nil {
		return errResult("cannot build the command line of tool %q: %v", t.spec.Name, err), nil
	}
	i := newInstance(ctx, p.r, p.mod, t.cfg.WithArgs(argv...), p.limits, p.grants, p.mounts)
	i.runCold(ctx, stdin, p.limits.Timeout)
	return p.result(ctx, t, i)
}

// appendRequest appends the agenthost/1 call document sent on stdin,
// {"tool":…,"arguments":…,"call_id":…}, to b. args is checked JSON: it
// goes as it is, unless it spans lines (a reuse instance reads one
// request a line), then compacted.
func appendRequest(b []byte, tool string, args json.RawMessage, callID string) []byte {
	b = append(b, `{"tool":`...)
	b = jsonenc.AppendString(b, tool)
	b = append(b, `,"arguments":`...)
	if bytes.IndexByte(args, '\n') < 0 {
		b = append(b, args...)
	} else {
		var c bytes.Buffer
		if err := json.Compact(&c, args); err != nil {
			b = append(b, "{}"...) // not reached: args passed the check
		} else {
			b = append(b, c.Bytes()...)
		}
	}
	b = append(b, `,"call_id":`...)
	b = jsonenc.AppendString(b, callID)
	return append(b, '}')
}

// decodeArgs decodes a call's arguments for Call, which gets them
// undecoded: "" or white space is {}; the message is the error result for
// text that is not JSON.
func decodeArgs(call loop.ToolCall) (any, string) {
	argcount.Decoded()
	trimmed := strings.TrimSpace(call.Arguments)
	if trimmed == "" {
		trimmed = "{}"
	}
	if !json.Valid([]byte(trimmed)) {
		return nil, fmt.Sprintf("invalid arguments for tool %q: not valid JSON: %s", call.Name, shorten(trimmed, 200))
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(trimmed))
	if err != nil {
		return nil, fmt.Sprintf("invalid arguments for tool %q: %v", call.Name, err)
	}
	return v, ""
}

// validate validates decoded arguments against the tool's schema; a
// non-empty message is the error result to return instead of running the
// plugin.
func (t *tool) validate(args any) string {
	argcount.Validated()
	if err := t.schema.Validate(args); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = validationMessage(ve)
		}
		return fmt.Sprintf("invalid arguments for tool %q: %s", t.spec.Name, msg)
	}
	return ""
}

// validationMessage renders a schema error without the internal schema URL.
func validationMessage(ve *jsonschema.ValidationError) string {
	return SchemaErrorText(ve, "; ")
}

// SchemaErrorText renders a validation error as its "at PATH: what"
// lines joined by sep, the schema's internal URL and the heading left out
// (the model reads them); the error's own text when it has no such lines.
func SchemaErrorText(ve *jsonschema.ValidationError, sep string) string {
	var out []string
	for _, l := range strings.Split(ve.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "jsonschema validation failed") {
			continue
		}
		out = append(out, strings.TrimPrefix(l, "- "))
	}
	if len(out) == 0 {
		return ve.Error()
	}
	return strings.Join(out, sep)
}

// result turns an ended instance into the call's outcome.
func (p *Plugin) result(ctx context.Context, t *tool, i *instance) (loop.ToolResult, error) {
	code, f := i.exitCode(ctx, t.cli != nil)
	// A quota hit explains the outcome better than what followed it (an
	// exit or a timeout), and fails the call even if the guest ignored
	// the errors; only an aborted run says so instead.
	if qf := i.quotaFailure(); qf != nil && (f == nil || f.Kind != sandbox.FailureCanceled) {
		f = qf
	}
	if f != nil {
		f.Plugin, f.Tool = p.name, t.spec.Name
		return loop.ToolResult{}, f
	}
	if t.cli != nil {
		return cliResult(code, i.stdout.Text(), i.stderr.Text()), nil
	}
	var res loop.ToolResult
	if i.stdout.Truncated() {
		res.Content = i.stdout.Text()
	} else {
		res = parseResult(i.stdout.Head(), p.limits.MaxOutput)
	}
	if code == 1 {
		res.IsError = true
		if strings.TrimSpace(res.Content) == "" {
			res.Content = i.stderr.Tail()
		}
		if res.Content == "" {
			res.Content = fmt.Sprintf("tool %q failed (exit code 1) without a message", t.spec.Name)
		}
	}
	return res, nil
}

// cliResult renders a wasi_cli run: stdout on success; exit code, stderr
// and stdout on failure.
// The same for a wasi_cli module and a command component.
func cliResult(code uint32, stdout, stderr string) loop.ToolResult {
	if code == 0 {
		return loop.ToolResult{Content: stdout}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit code %d", code)
	if s := strings.TrimSpace(stderr); s != "" {
		fmt.Fprintf(&b, "\nstderr:\n%s", s)
	}
	if s := strings.TrimSpace(stdout); s != "" {
		fmt.Fprintf(&b, "\nstdout:\n%s", s)
	}
	return loop.ToolResult{Content: b.String(), IsError: true}
}

// callResult is the MCP CallToolResult an agenthost plugin may print.
type callResult struct {
	Content *[]json.RawMessage `json:"content"`
	IsError bool               `json:"is_error"`
	// IsErrorMCP is MCP's spelling, accepted too.
	IsErrorMCP bool `json:"isError"`
	// Structured is the result's structured content (MCP's
	// structuredContent is accepted too), passed on by mcp serve when the
	// tool declares an output_schema.
	Structured    json.RawMessage `json:"structured_content"`
	StructuredMCP json.RawMessage `json:"structuredContent"`
}

// parseResult reads an agenthost/1 stdout: a CallToolResult, or plain text.
// Its content items are bounded by capItems (max: max_output).
func parseResult(out []byte, max int64) loop.ToolResult {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var cr callResult
		if err := json.Unmarshal(trimmed, &cr); err == nil && cr.Content != nil {
			text, rich := extism.ContentText(*cr.Content)
			res := loop.ToolResult{Content: text, IsError: cr.IsError || cr.IsErrorMCP}
			if rich {
				res.MCP, _ = json.Marshal(*cr.Content)
			}
			res.Structured = structured(cr, max)
			return capItems(res, max)
		}
	}
	return loop.ToolResult{Content: sandbox.ValidUTF8(out)}
}

// structured is a result's structured content when it is a JSON object of
// at most max bytes (max_output), else nil: whole or not at all.
func structured(cr callResult, max int64) json.RawMessage {
	s := bytes.TrimSpace(cr.Structured)
	if len(s) == 0 {
		s = bytes.TrimSpace(cr.StructuredMCP)
	}
	if len(s) == 0 || s[0] != '{' || int64(len(s)) > max {
		return nil
	}
	return append(json.RawMessage(nil), s...)
}

// maxItems bounds the MCP content items of one result passed on.
const maxItems = 64

// capItems drops a result's MCP content items when there are more than
// maxItems or their JSON is larger than max bytes (max_output): the
// result's text, with a note saying so, is then all that is passed on.
func capItems(res loop.ToolResult, max int64) loop.ToolResult {
	if res.MCP == nil {
		return res
	}
	var items []json.RawMessage
	if json.Unmarshal(res.MCP, &items) != nil {
		res.MCP = nil
		return res
	}
	if len(items) <= maxItems && int64(len(res.MCP)) <= max {
		return res
	}
	res.Content += fmt.Sprintf("\n[the result's %d content items (%s of JSON) exceed the limits (%d items, max_output %s): only this text is passed on]",
		len(items), bytesize.About(int64(len(res.MCP))), maxItems, bytesize.About(max))
	res.MCP = nil
	return res
}

func errResult(format string, args ...any) loop.ToolResult {
	return loop.ToolResult{Content: fmt.Sprintf(format, args...), IsError: true}
}

// takeWarm returns the tool's pre-started instance, or nil.
func (p *Plugin) takeWarm(ctx context.Context, t *tool) *instance {
	select {
	case i := <-t.warm:
		select {
		case <-i.done:
			// It ended before its call: the plugin does not wait for its
			// request, so pre-starting it cannot help.
			t.noWarm.Store(true)
			zerolog.Ctx(ctx).Debug().Str("plugin", p.name).Str("tool", t.spec.Name).Msg("pre-started instance ended before its call; pre-starting off for this tool")
			return nil
		default:
			return i
		}
	default:
		return nil
	}
}

// refill puts the next instance of t in its slot and starts it in the
// background, if pre-starting is on and the slot is empty. The slot is
// filled before refill returns, so the next call finds the instance even if
// it is still initialising; it then waits for the guest to read its request.
func (p *Plugin) refill(t *tool) {
	if !p.prestart.Load() || t.noWarm.Load() {
		return
	}
	t.fill.Lock()
	defer t.fill.Unlock()
	if t.gone || len(t.warm) > 0 {
		return
	}
	if i := p.startPiped(t, true); i != nil {
		t.warm <- i
	}
}

// callReuse serves one call of tool t of a reuse plugin: an idle instance
// of the caller's scope, else the pre-started one, else a new one. The
// instances serve every tool of the plugin (p.ah.shared).
func (p *Plugin) callReuse(ctx context.Context, t *tool, req []byte) (loop.ToolResult, error) {
	line := append(req, '\n')
	ref, scoped := scopeOf(ctx)
	var i *instance
	if scoped {
		i, _ = ref.s.take(ref.owner, p.ah.shared).(*instance)
	}
	if i == nil {
		if i = p.takeWarm(ctx, p.ah.shared); i == nil {
			if i = p.startPiped(p.ah.shared, false); i == nil {
				return loop.ToolResult{}, &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: sandbox.FailureStart, Err: errClosed}
			}
		}
		if !scoped {
			// Only calls without a scope start a fresh instance each time;
			// a scope keeps its own, so a spare would idle, costing a
			// guest start-up of CPU and its memory.
			p.refill(p.ah.shared)
		}
	}
	if !i.serveLine(ctx, line, p.limits.Timeout) {
		// The instance ended before it answered: judge it as a one-call
		// instance (exit code, stdout, cause).
		return p.result(ctx, t, i)
	}
	res, f := i.answer(t)
	if f != nil {
		f.Plugin, f.Tool = p.name, t.spec.Name
		i.retire()
		return loop.ToolResult{}, f
	}
	if scoped && i.calls >= reuseCalls && !res.IsError {
		// Worn out, not broken: its successor starts now, off the next
		// call's path, and waits in the scope.
		i.retire()
		if j := p.startPiped(p.ah.shared, true); j != nil && !ref.s.put(ref.owner, p.ah.shared, j) {
			j.retire()
		}
		return res, nil
	}
	if !scoped || res.IsError || i.ctx.Err() != nil || !ref.s.put(ref.owner, p.ah.shared, i) {
		i.retire()
	}
	return res, nil
}

// startPiped makes an instance of t reading its requests from a pipe and
// starts it in the background; nil when the runtime is closed. A
// pre-started (warm) instance has a watchdog until it first reads stdin.
func (p *Plugin) startPiped(t *tool, warm bool) *instance {
	r := p.r
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.bg.Add(1)
	r.mu.Unlock()
	var i *instance
	if t.ext != nil {
		i = p.newExtismInstance(r.ctx, r.ctx, t, t.cfg).withPipe()
	} else {
		i = newInstance(r.ctx, r, p.mod, t.cfg, p.limits, p.grants, p.mounts).withPipe().takeNotes(r.ctx, p.name, *zerolog.Ctx(r.ctx))
		i.reuse = p.ah != nil && p.ah.reuse
	}
	if warm {
		// Until the guest waits on stdin, the watchdog bounds its start.
		i.arm(p.limits.Timeout, errStartTimeout)
	}
	go func() {
		defer r.bg.Done()
		i.run()
		i.disarm()
	}()
	return i
}

// newExtismInstance makes an instance that calls t's export; parent is the
// context the instance lives in, logCtx carries the logger.
func (p *Plugin) newExtismInstance(parent, logCtx context.Context, t *tool, cfg wazero.ModuleConfig) *instance {
	i := newInstance(parent, p.r, p.mod, cfg, p.limits, p.grants, p.mounts)
	i.ext = extism.NewCall(i.ctx, p.ext.k, p.limits.Memory, *zerolog.Ctx(logCtx))
	i.ext.SetClient(loop.CallClientFrom(logCtx))
	i.ext.SetReport(loop.CallReportFrom(logCtx))
	i.extFn = t.ext.function
	return i
}

// callExtism runs one call of an Extism plugin's tool: in its pre-started
// instance when there is one, else in a fresh one.
func (p *Plugin) callExtism(ctx context.Context, t *tool, _ loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	var input []byte
	if t.ext.dialect == DialectPlain {
		_, in, err := t.cli.command(args)
		if err != nil {
			return errResult("cannot build the input of tool %q: %v", t.spec.Name, err), nil
		}
		input = in
	} else {
		var token any
		if cc := loop.CallClientFrom(ctx); cc != nil {
			token = cc.ProgressToken()
		}
		input = t.ext.dialect.CallInput(t.ext.name, args, p.ext.reqs.Add(1), token)
	}
	if p.ext.reuse {
		if ref, scoped := scopeOf(ctx); scoped {
			return p.callExtismHeld(ctx, t, ref, input)
		}
	}
	i := p.takeWarm(ctx, t)
	if i != nil {
		i.ext.SetClient(loop.CallClientFrom(ctx)) // started before the call
		i.ext.SetReport(loop.CallReportFrom(ctx))
		i.serve(ctx, input, p.limits.Timeout)
	} else {
		i = p.newExtismInstance(ctx, ctx, t, t.cfg)
		i.runCold(ctx, input, p.limits.Timeout)
	}
	p.refill(t)
	return p.extismResult(ctx, t, i)
}

// extismResult turns an ended Extism instance into the call's outcome: the
// output on success (a CallToolResult in the mcp dialects); an error
// result for a non-zero return, an error_set message, a non-zero exit or a
// refusal of the host (http, memory, vars); a *sandbox.Failure for a trap, a
// timeout or a flood.
func (p *Plugin) extismResult(ctx context.Context, t *tool, i *instance) (loop.ToolResult, error) {
	c := i.ext
	if herr := c.HostError(); herr != nil && i.ctx.Err() == nil {
		if errors.Is(herr, extism.ErrMemory) {
			return loop.ToolResult{}, &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: sandbox.FailureMemory, Err: herr, Stderr: i.stderr.Summary()}
		}
		return loop.ToolResult{Content: herr.Error(), IsError: true}, nil
	}
	code, f := i.exitCode(ctx, true)
	if qf := i.quotaFailure(); qf != nil && (f == nil || f.Kind != sandbox.FailureCanceled) {
		f = qf
	}
	if f != nil {
		f.Plugin, f.Tool = p.name, t.spec.Name
		f.Err = trimStack(f.Err)
		return loop.ToolResult{}, f
	}
	exited := i.err != nil // a proc_exit: exitCode took it as an exit code
	if !exited {
		code = c.Returned()
	}
	msg, msgSet := c.ErrorMessage()
	if code != 0 || msgSet {
		var b strings.Builder
		if msg != "" {
			b.WriteString(msg)
		} else if exited {
			fmt.Fprintf(&b, "%s exited with code %d", t.ext.function, code)
		} else {
			fmt.Fprintf(&b, "%s returned %d", t.ext.function, int32(code))
		}
		if s := i.stderr.Tail(); s != "" {
			fmt.Fprintf(&b, "\nstderr:\n%s", s)
		}
		return loop.ToolResult{Content: b.String(), IsError: true}, nil
	}
	var res loop.ToolResult
	if t.ext.dialect == DialectPlain {
		res.Content = sandbox.ValidUTF8(c.Output())
	} else {
		res.Content, res.IsError, res.MCP = extism.Result(c.Output())
	}
	res.Content = capText(res.Content, p.limits.MaxOutput)
	res = capItems(res, p.limits.MaxOutput)
	return res, nil
}

// startHeld instantiates and initialises an instance of t's plugin to keep.
// It returns the instance that failed (for its outcome) when it cannot.
func (p *Plugin) startHeld(ctx context.Context, t *tool) (*extismHeld, *instance) {
	i := p.newExtismInstance(p.r.ctx, ctx, t, t.cfg)
	h := &extismHeld{i: i}
	i.held = h
	i.serving = true
	i.arm(p.limits.Timeout, errTimeout)
	stop := context.AfterFunc(ctx, func() { i.cancel(context.Cause(ctx)) })
	mod := i.exec()
	stop()
	i.disarm()
	if i.err != nil || mod == nil || i.ctx.Err() != nil {
		if mod != nil {
			mod.Close(context.WithoutCancel(i.ctx))
		}
		i.mem.Release()
		return nil, i
	}
	h.mod = mod
	return h, nil
}

// callExtismHeld serves a call of a reuse Extism plugin inside a run's
// scope: an idle instance kept for the agent and tool, or a new one.
func (p *Plugin) callExtismHeld(ctx context.Context, t *tool, ref scopeRef, input []byte) (loop.ToolResult, error) {
	h, _ := ref.s.take(ref.owner, p.ext.key).(*extismHeld)
	if h == nil {
		var failed *instance
		if h, failed = p.startHeld(ctx, t); h == nil {
			res, err := p.extismResult(ctx, t, failed)
			failed.cancel(nil)
			return res, err
		}
	}
	c := h.call(ctx, p, t, input)
	res, err := p.extismResult(ctx, t, c)
	healthy := err == nil && !res.IsError && c.err == nil && c.ctx.Err() == nil && c.ext.HostError() == nil
	c.cancel(nil)
	if !healthy || !h.alive() || h.calls >= reuseCalls || !ref.s.put(ref.owner, p.ext.key, h) {
		h.retire()
	}
	return res, err
}

// logCall logs the outcome of a call.
func (p *Plugin) logCall(ctx context.Context, t *tool, start time.Time, res loop.ToolResult, err error) {
	log := zerolog.Ctx(ctx)
	if err != nil {
		// Info: the caller reports the failure to a person (the run's
		// last lines, an MCP error result); this is the record of it.
		log.Info().Err(err).Str("plugin", p.name).Str("tool", t.spec.Name).Dur("duration", time.Since(start)).Msg("plugin failed")
	} else {
		log.Debug().Str("plugin", p.name).Str("tool", t.spec.Name).Bool("is_error", res.IsError).Dur("duration", time.Since(start)).Msg("tool call")
	}
}
