package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/loop"
)

// FailureKind classifies a plugin failure.
type FailureKind string

const (
	// FailureTrap: the guest trapped (unreachable, out-of-bounds access,
	// stack overflow, ...).
	FailureTrap FailureKind = "trap"
	// FailureTimeout: the call ran past limits.timeout and was stopped.
	FailureTimeout FailureKind = "timeout"
	// FailureExit: the guest exited with a code other than 0 or 1 (a Go
	// panic exits with 2).
	FailureExit FailureKind = "exit"
	// FailureMemory: the guest failed with its memory at limits.memory.
	FailureMemory FailureKind = "memory"
	// FailureOutput: the guest wrote more than twice limits.max_output and
	// was stopped.
	FailureOutput FailureKind = "output"
	// FailureCanceled: the call's context was cancelled (the run was
	// aborted); errors.Is(err, context.Canceled) holds.
	FailureCanceled FailureKind = "canceled"
	// FailureStart: the module could not be instantiated.
	FailureStart FailureKind = "start"
	// FailureQuota: the guest wrote more than limits.max_write or created
	// more than limits.max_files entries in its mounts during the call;
	// what went past the quota failed with EIO.
	FailureQuota FailureKind = "quota"
)

// Failure is a plugin that broke during a call, as opposed to a tool that
// reported an error result. The loop shows it to the model as an error
// result and goes on.
type Failure struct {
	Plugin string
	Tool   string
	Kind   FailureKind
	// ExitCode is the guest's exit code for FailureExit and FailureMemory.
	ExitCode uint32
	// Stderr is the end of the guest's stderr (at most 2 KiB).
	Stderr string
	Err    error
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q tool %q: %s", f.Plugin, f.Tool, f.Kind)
	if f.Err != nil {
		fmt.Fprintf(&b, ": %v", f.Err)
	}
	if f.Stderr != "" {
		fmt.Fprintf(&b, "; stderr: %s", f.Stderr)
	}
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }

// request is the agenthost/1 call document sent on stdin.
type request struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"call_id"`
}

// Check validates the call's arguments against the tool's schema without
// running the plugin: "" when they are valid, else the reason (the text of
// the error result Call would give).
func (p *Plugin) Check(call loop.ToolCall) string {
	t, ok := p.byName[call.Name]
	if !ok {
		return fmt.Sprintf("plugin %q has no tool %q", p.name, call.Name)
	}
	_, msg := t.checkArgs(call.Arguments)
	return msg
}

// Call runs one tool call. Arguments that are not JSON or fail the tool's
// schema give an error result without running the plugin. Otherwise a fresh
// sandboxed instance (possibly pre-started) serves the call: exit 0 gives a
// result, exit 1 an error result (IsError); a trap, timeout, other exit code
// or output flood gives a *Failure. Call never panics on guest behaviour.
func (p *Plugin) Call(ctx context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	t, ok := p.byName[call.Name]
	if !ok {
		names := make([]string, len(p.tools))
		for i, s := range p.tools {
			names[i] = s.Name
		}
		return errResult("plugin %q has no tool %q; its tools are: %s", p.name, call.Name, strings.Join(names, ", ")), nil
	}
	args, msg := t.checkArgs(call.Arguments)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	if p.r.isClosed() {
		return loop.ToolResult{}, &Failure{Plugin: p.name, Tool: t.spec.Name, Kind: FailureStart, Err: errClosed}
	}
	if err := ctx.Err(); err != nil {
		return loop.ToolResult{}, &Failure{Plugin: p.name, Tool: t.spec.Name, Kind: FailureCanceled, Err: context.Cause(ctx)}
	}
	if t.ext != nil {
		return p.callExtism(ctx, t, call, args)
	}
	start := time.Now()
	var (
		i     *instance
		stdin []byte
		res   loop.ToolResult
		err   error
	)
	switch {
	case p.reuse:
		stdin, _ = json.Marshal(request{Tool: t.spec.Name, Arguments: args, CallID: call.ID})
		res, err = p.callReuse(ctx, t, stdin)
	case t.cli != nil:
		argv, in, cerr := t.cli.command(args)
		if cerr != nil {
			return errResult("cannot build the command line of tool %q: %v", t.spec.Name, cerr), nil
		}
		stdin = in
		i = newInstance(ctx, p.r, p.mod, t.cfg.WithArgs(argv...), p.limits, p.grants, p.mounts)
		i.runCold(ctx, stdin, p.limits.Timeout)
		res, err = p.result(ctx, t, i)
	default:
		stdin, _ = json.Marshal(request{Tool: t.spec.Name, Arguments: args, CallID: call.ID})
		if i = p.takeWarm(ctx, t); i != nil {
			i.serve(ctx, stdin, p.limits.Timeout)
		} else {
			i = newInstance(ctx, p.r, p.mod, t.cfg, p.limits, p.grants, p.mounts)
			i.runCold(ctx, stdin, p.limits.Timeout)
		}
		p.refill(t)
		res, err = p.result(ctx, t, i)
	}
	log := zerolog.Ctx(ctx)
	if err != nil {
		log.Warn().Err(err).Str("plugin", p.name).Str("tool", t.spec.Name).Dur("duration", time.Since(start)).Msg("plugin failed")
	} else {
		log.Debug().Str("plugin", p.name).Str("tool", t.spec.Name).Bool("is_error", res.IsError).Dur("duration", time.Since(start)).Msg("tool call")
	}
	return res, err
}

// checkArgs parses and validates the arguments; a non-empty message is the
// error result to return instead of running the plugin.
func (t *tool) checkArgs(raw string) (json.RawMessage, string) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		trimmed = "{}"
	}
	if !json.Valid([]byte(trimmed)) {
		return nil, fmt.Sprintf("invalid arguments for tool %q: not valid JSON: %s", t.spec.Name, shorten(trimmed, 200))
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(trimmed))
	if err != nil {
		return nil, fmt.Sprintf("invalid arguments for tool %q: %v", t.spec.Name, err)
	}
	if err := t.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = validationMessage(ve)
		}
		return nil, fmt.Sprintf("invalid arguments for tool %q: %s", t.spec.Name, msg)
	}
	return json.RawMessage(trimmed), ""
}

// validationMessage renders a schema error without the internal schema URL.
func validationMessage(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "jsonschema validation failed") {
			continue
		}
		out = append(out, strings.TrimPrefix(l, "- "))
	}
	if len(out) == 0 {
		return ve.Error()
	}
	return strings.Join(out, "; ")
}

// result turns an ended instance into the call's outcome.
func (p *Plugin) result(ctx context.Context, t *tool, i *instance) (loop.ToolResult, error) {
	code, f := i.exitCode(ctx, t.cli != nil)
	// A quota hit explains the outcome better than what followed it (an
	// exit or a timeout), and fails the call even if the guest ignored
	// the errors; only an aborted run says so instead.
	if qf := i.quotaFailure(); qf != nil && (f == nil || f.Kind != FailureCanceled) {
		f = qf
	}
	if f != nil {
		f.Plugin, f.Tool = p.name, t.spec.Name
		return loop.ToolResult{}, f
	}
	if t.cli != nil {
		return cliResult(code, i), nil
	}
	var res loop.ToolResult
	if i.stdout.truncated() {
		res.Content = i.stdout.text()
	} else {
		res = parseResult(i.stdout.buf)
	}
	if code == 1 {
		res.IsError = true
		if strings.TrimSpace(res.Content) == "" {
			res.Content = i.stderr.tail()
		}
		if res.Content == "" {
			res.Content = fmt.Sprintf("tool %q failed (exit code 1) without a message", t.spec.Name)
		}
	}
	return res, nil
}

// cliResult renders a wasi_cli run: stdout on success; exit code, stderr
// and stdout on failure.
func cliResult(code uint32, i *instance) loop.ToolResult {
	if code == 0 {
		return loop.ToolResult{Content: i.stdout.text()}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit code %d", code)
	if s := strings.TrimSpace(i.stderr.text()); s != "" {
		fmt.Fprintf(&b, "\nstderr:\n%s", s)
	}
	if s := strings.TrimSpace(i.stdout.text()); s != "" {
		fmt.Fprintf(&b, "\nstdout:\n%s", s)
	}
	return loop.ToolResult{Content: b.String(), IsError: true}
}

// callResult is the MCP CallToolResult an agenthost plugin may print.
type callResult struct {
	Content *[]struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"is_error"`
}

// parseResult reads an agenthost/1 stdout: a CallToolResult, or plain text.
func parseResult(out []byte) loop.ToolResult {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var cr callResult
		if err := json.Unmarshal(trimmed, &cr); err == nil && cr.Content != nil {
			parts := make([]string, 0, len(*cr.Content))
			for _, c := range *cr.Content {
				if c.Type == "text" {
					parts = append(parts, c.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[%s content omitted]", c.Type))
				}
			}
			return loop.ToolResult{Content: validUTF8([]byte(strings.Join(parts, "\n"))), IsError: cr.IsError}
		}
	}
	return loop.ToolResult{Content: validUTF8(out)}
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
	if len(t.warm) > 0 {
		return
	}
	if i := p.startPiped(t, true); i != nil {
		t.warm <- i
	}
}

// describe runs the module with AGENTHOST_MODE=describe in a sandbox with
// nothing granted and reads its manifest from stdout.
func (r *Runtime) describe(ctx context.Context, mod *module, name string, limits Limits) (*Manifest, error) {
	m, _, err := r.describeRaw(ctx, mod, name, limits)
	return m, err
}

// describeRaw is describe, also returning the output it parsed.
func (r *Runtime) describeRaw(ctx context.Context, mod *module, name string, limits Limits) (*Manifest, []byte, error) {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().WithArgs(name).WithEnv("AGENTHOST_MODE", "describe")
	i := newInstance(ctx, r, mod, cfg, limits, Grants{}, nil)
	i.runCold(ctx, nil, limits.Timeout)
	code, f := i.exitCode(ctx, false)
	if f != nil {
		f.Plugin, f.Tool = name, "(describe)"
		return nil, nil, fmt.Errorf("describe run failed: %w", f)
	}
	if code != 0 {
		msg := fmt.Sprintf("describe run exited with code %d", code)
		if s := i.stderr.tail(); s != "" {
			msg += "; stderr: " + s
		}
		return nil, nil, errors.New(msg)
	}
	if i.stdout.truncated() {
		return nil, nil, fmt.Errorf("describe output exceeds max_output (%s)", sizeString(uint64(limits.MaxOutput)))
	}
	m, err := ParseManifest(i.stdout.buf)
	if err != nil {
		return nil, nil, fmt.Errorf("describe output: %w", err)
	}
	return m, i.stdout.buf, nil
}
