package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/toolname"
)

// The attributes of Extism plugins: config, the http block, and tool
// blocks naming an export (function) and its input.

// extismTools reports whether the block has what only Extism plugins have:
// config, http, or a tool naming a function or an input.
func extismTools(rp *rawPlugin) bool {
	if present(rp.ConfigRange) || rp.HTTP != nil || present(rp.ReuseRange) {
		return true
	}
	for _, t := range rp.Tools {
		if present(t.FunctionRange) || present(t.InputRange) {
			return true
		}
	}
	return false
}

// extism builds the Extism parts of a plugin block: config, http and its
// tool blocks (optional: mcp.run and hyper-mcp plugins describe their own).
func (b *builder) extism(p *Plugin, rp *rawPlugin, seen map[string]hcl.Range) {
	p.Config = rp.Config
	p.Reuse = rp.Reuse
	b.httpAllow(p, rp)
	for _, rt := range rp.Tools {
		if !b.declaredTool(p, rt, seen) {
			continue
		}
		if n := p.ToolName(rt.Name); !toolname.Valid(n) {
			b.errorf(rt.NameRange, "Invalid tool name",
				"Tool names sent to a model must match %s (letters, digits, _ and -, at most 64); try %q.", toolname.Pattern, toolname.Fix(n))
		}
		for _, a := range []struct {
			name string
			r    hcl.Range
		}{{"argv", rt.ArgvRange}, {"stdin", rt.StdinRange}} {
			if present(a.r) {
				b.errorf(a.r, "Invalid attribute for an Extism tool", "%s is for wasi_cli tools; an Extism tool calls an export (function = \"...\") with input (default jsonencode(args)).", a.name)
			}
		}
		t := &CLITool{
			Name:        rt.Name,
			Description: rt.Description,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Function:    rt.Function,
			DefRange:    rt.DefRange,
		}
		var props []string
		if present(rt.InputSchemaRange) {
			t.InputSchema, props = b.inputSchema(rt.InputSchema, rt.InputSchemaRange)
		}
		if present(rt.FunctionRange) && strings.TrimSpace(rt.Function) == "" {
			b.errorf(rt.FunctionRange, "Empty function", "function names the export of the Extism plugin to call, like \"count_vowels\"; omit it to call the export named like the tool.")
		}
		if present(rt.InputRange) {
			t.Input = rt.Input
			b.callExpr(rt.Input, "input", props)
		}
		p.Tools = append(p.Tools, t)
	}
}

// notExtism reports the Extism attributes of a plugin of another kind.
func (b *builder) notExtism(p *Plugin, rp *rawPlugin) {
	if present(rp.ConfigRange) {
		b.errorf(rp.ConfigRange, "config on a "+string(p.Kind)+" plugin", "config is the Extism plugin config (config_get) or a component's wasi:config/store; it is only for kind = \"extism\" and kind = \"component\" plugins. Use env for a %s plugin.", p.Kind)
	}
	if present(rp.ReuseRange) {
		b.errorf(rp.ReuseRange, "reuse on a "+string(p.Kind)+" plugin", "reuse = true is for Extism plugins (kind = \"extism\"). An agenthost/1 plugin declares \"reuse\": true in its manifest; a %s plugin serves one call per instance.", p.Kind)
	}
	if rp.HTTP != nil {
		b.errorf(rp.HTTP.DefRange, "http on a "+string(p.Kind)+" plugin", "The http block grants network access to Extism plugins (kind = \"extism\") and components (kind = \"component\") only; %s plugins have no network.", p.Kind)
	}
	for _, t := range rp.Tools {
		for _, a := range []struct {
			name string
			r    hcl.Range
		}{{"function", t.FunctionRange}, {"input", t.InputRange}} {
			if present(a.r) {
				b.errorf(a.r, "Invalid attribute for a "+string(p.Kind)+" tool", "%s is for tools of Extism plugins (kind = \"extism\").", a.name)
			}
		}
	}
}

// checkOrigin checks one http allow entry: "" when it is an origin
// scheme://host[:port], else the error.
func checkOrigin(s string) string {
	u, err := url.Parse(s)
	bad := err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != ""
	if !bad {
		host := u.Hostname()
		rest, _ := strings.CutPrefix(host, "*.")
		bad = rest == "" || strings.Contains(rest, "*")
	}
	if bad {
		return fmt.Sprintf("%q is not an origin: each entry is scheme://host[:port] with scheme http or https and no path, like \"https://api.github.com\" or \"http://127.0.0.1:8080\"; the host may start with \"*.\" to allow its subdomains.", s)
	}
	return ""
}

// EvalInput evaluates an Extism tool's input for one call: the bytes given
// to the plugin, jsonencode(args) without an input attribute. Its argv is
// always nil; it has the signature of a plugin.CLITool's Command.
func (t *CLITool) EvalInput(args json.RawMessage) (argv []string, input []byte, err error) {
	if t.Input == nil {
		if len(strings.TrimSpace(string(args))) == 0 {
			return nil, []byte("{}"), nil
		}
		return nil, args, nil
	}
	if s, ok := argsString(t.Input, args); ok {
		return nil, []byte(s), nil
	}
	return t.evalInput(args)
}

// evalInput is EvalInput's general path: the expression evaluated with
// args bound to the arguments as a cty object.
func (t *CLITool) evalInput(args json.RawMessage) (argv []string, input []byte, err error) {
	ctx, err := t.argsContext(args)
	if err != nil {
		return nil, nil, err
	}
	v, diags := t.Input.Value(ctx)
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("tool %q: input: %w", t.Name, diagError(diags))
	}
	if v.IsNull() {
		return nil, []byte{}, nil
	}
	s, err := toString(v)
	if err != nil {
		return nil, nil, fmt.Errorf("tool %q: input: %w", t.Name, err)
	}
	return nil, []byte(s), nil
}

// httpAllow reads the http block's allow list (Extism plugins and
// components) into p.HTTPAllow, reporting each entry that is not an origin.
func (b *builder) httpAllow(p *Plugin, rp *rawPlugin) {
	h := rp.HTTP
	if h == nil || !b.set(h.AllowRange) {
		return
	}
	for _, a := range h.Allow {
		if err := checkOrigin(a); err != "" {
			b.errorf(h.AllowRange, "Invalid http allow entry", "%s", err)
			continue
		}
		p.HTTPAllow = append(p.HTTPAllow, a)
	}
}

// component checks a component's block: config (wasi:config/store) and
// http (wasi:http/outgoing-handler) apply, reuse does not. Tool blocks
// are a command component's tools (it exports wasi:cli/run, which
// host/plugin checks at load), each a command line and stdin as a
// wasi_cli tool's; Extism's function and input are not for them.
func (b *builder) component(p *Plugin, rp *rawPlugin, cliTools map[string]hcl.Range) {
	p.Config = rp.Config
	b.httpAllow(p, rp)
	if present(rp.ReuseRange) {
		b.errorf(rp.ReuseRange, "reuse on a component plugin", "reuse = true is for Extism plugins (kind = \"extism\"); a component runs every call in fresh instances. Remove reuse.")
	}
	for _, t := range rp.Tools {
		for _, r := range []hcl.Range{t.FunctionRange, t.InputRange} {
			if present(r) {
				b.errorf(r, "Invalid attribute for a component tool", "Plugin %q is a WASI 0.2 component. A tool block is for a command component (one that exports wasi:cli/run): it gives the command line (argv) and stdin of a run, as a wasi_cli tool's does; function and input are for Extism plugins. A component that exports functions needs no tool blocks: each function is a tool (tool_prefix and rename change the names the model sees).", p.Name)
			}
		}
	}
	b.cliTools(p, rp, cliTools)
}
