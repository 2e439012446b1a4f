package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/toolname"
)

func (b *builder) host(cfg *Config, h *rawHost) {
	cfg.Host = Host{MaxSteps: defaults.MaxSteps, DataDir: defaults.DataDir, MaxDepth: defaults.MaxDepth,
		MaxParallelTools: defaults.MaxParallelTools, MaxCallsPerStep: defaults.MaxCallsPerStep}
	if h != nil {
		b.intAtLeast(h.MaxSteps, h.MaxStepsRange, "max_steps", 1, &cfg.Host.MaxSteps,
			"max_steps must be at least 1 (the default is %d).", defaults.MaxSteps)
		b.intAtLeast(h.MaxDepth, h.MaxDepthRange, "max_depth", 0, &cfg.Host.MaxDepth,
			"max_depth must be 0 or more; 0 allows no subagents (the default is %d).", defaults.MaxDepth)
		b.intAtLeast(h.MaxParallelTools, h.MaxParallelToolsRange, "max_parallel_tools", 1, &cfg.Host.MaxParallelTools,
			"max_parallel_tools must be at least 1: it is how many tool calls run at once, in one run and across all the runs of the process; 1 runs them one at a time (the default is %d).", defaults.MaxParallelTools)
		b.intAtLeast(h.MaxCallsPerStep, h.MaxCallsPerStepRange, "max_calls_per_step", 1, &cfg.Host.MaxCallsPerStep,
			"max_calls_per_step must be at least 1: it is how many tool calls of one model response run, the rest getting an error result (the default is %d).", defaults.MaxCallsPerStep)
		b.hostCost(cfg, h)
		b.hostOtel(cfg, h)
		if b.set(h.DataDirRange) {
			if strings.TrimSpace(h.DataDir) == "" {
				b.errorf(h.DataDirRange, "Invalid data_dir", "data_dir must be a directory path; remove it for the default %q.", defaults.DataDir)
			} else {
				cfg.Host.DataDir = h.DataDir
			}
		}
	}
	cfg.Host.DataDir = b.abs(cfg.Host.DataDir)
}

// hostOtel reads host.otel: true or false, nothing else.
func (b *builder) hostOtel(cfg *Config, h *rawHost) {
	if !b.set(h.OtelRange) || h.Otel.IsNull() {
		return
	}
	if h.Otel.Type() != cty.Bool || !h.Otel.IsKnown() {
		b.errorf(h.OtelRange, "Invalid otel", "otel must be true or false (without quotes), not %s; otel = true exports OpenTelemetry traces to the collector that OTEL_EXPORTER_OTLP_ENDPOINT names (http://localhost:4318 without it).", ctyKind(h.Otel))
		return
	}
	cfg.Host.Otel = h.Otel.True()
}

// ctyKind names a value's type for an error message.
func ctyKind(v cty.Value) string {
	switch t := v.Type(); {
	case t == cty.String:
		if v.IsKnown() {
			return fmt.Sprintf("the string %q", v.AsString())
		}
		return "a string"
	case t == cty.Number:
		return "a number"
	case t.IsObjectType() || t.IsMapType():
		return "an object"
	case t.IsTupleType() || t.IsListType() || t.IsSetType():
		return "a list"
	}
	return v.Type().FriendlyName()
}

// duration parses a duration attribute, or returns def when it is unset or
// did not decode.
func (b *builder) duration(s string, r hcl.Range, attr string, def time.Duration) time.Duration {
	return parsed(b, s, r, attr, def, "Invalid duration", parseDuration)
}

// size parses a size attribute, or returns def when it is unset or did not
// decode.
func (b *builder) size(s string, r hcl.Range, attr string, def uint64) uint64 {
	return parsed(b, s, r, attr, def, "Invalid size", parseSize)
}

// parsed reads the string attribute attr (s, at r) with parse; def when it
// is unset or did not decode, or parse fails (an error with summary).
func parsed[T any](b *builder, s string, r hcl.Range, attr string, def T, summary string, parse func(string) (T, error)) T {
	if !b.set(r) {
		return def
	}
	v, err := parse(s)
	if err != nil {
		b.errorf(r, summary, "%s: %v.", attr, err)
		return def
	}
	return v
}

// oneOf checks an enumerated attribute of b; it returns def when unset or
// not one of allowed.
func oneOf[T ~string](b *builder, v string, r hcl.Range, attr string, def T, allowed ...T) T {
	if !b.set(r) {
		return def
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if v == string(a) {
			return a
		}
		names[i] = string(a)
	}
	hint := ""
	if s := Suggest(v, names); s != "" {
		hint = fmt.Sprintf(" Did you mean %q?", s)
	}
	b.errorf(r, "Invalid "+attr, "%s must be one of %s, not %q.%s", attr, quoteList(names), v, hint)
	return def
}

func (b *builder) provider(rp *rawProvider) *Provider {
	p := &Provider{
		Name:     rp.Name,
		APIKey:   rp.APIKey,
		Headers:  rp.Headers,
		DefRange: rp.DefRange,
		Retry: Retry{
			Attempts: defaults.RetryAttempts,
			Initial:  defaults.RetryInitial,
			MaxDelay: defaults.RetryMaxDelay,
		},
	}
	switch {
	case !present(rp.BaseURLRange):
		b.errorf(rp.DefRange, "Missing base_url",
			"provider %q needs base_url, its OpenAI-compatible endpoint, e.g. base_url = \"http://127.0.0.1:11434/v1\" (Ollama) or \"https://api.openai.com/v1\".", rp.Name)
	case b.set(rp.BaseURLRange):
		if why := baseURLProblem(rp.BaseURL); why != "" {
			b.errorf(rp.BaseURLRange, "Invalid base_url", "%s", why)
		}
		p.BaseURL = strings.TrimRight(rp.BaseURL, "/")
	}
	if r := rp.Retry; r != nil {
		b.intAtLeast(r.Attempts, r.AttemptsRange, "attempts", 1, &p.Retry.Attempts,
			"attempts counts every try including the first and must be at least 1; attempts = 1 disables retries.")
		p.Retry.Initial = b.duration(r.Initial, r.InitialRange, "initial", defaults.RetryInitial)
		p.Retry.MaxDelay = b.duration(r.MaxDelay, r.MaxDelayRange, "max_delay", defaults.RetryMaxDelay)
		if p.Retry.MaxDelay < p.Retry.Initial && b.set(r.MaxDelayRange) {
			b.errorf(r.MaxDelayRange, "Invalid max_delay", "max_delay (%s) must be at least initial (%s).", p.Retry.MaxDelay, p.Retry.Initial)
		}
	}
	p.FinalStepTools = oneOf(b, rp.FinalStepTools, rp.FinalStepToolsRange, "final_step_tools", defaults.FinalStepTools, FinalToolsOmit, FinalToolsNone)
	p.IdleTimeout = b.duration(rp.IdleTimeout, rp.IdleTimeoutRange, "idle_timeout", defaults.IdleTimeout)
	p.RequestTimeout = b.duration(rp.RequestTimeout, rp.RequestTimeoutRange, "request_timeout", defaults.RequestTimeout)
	p.StructuredOutput = oneOf(b, rp.StructuredOutput, rp.StructuredOutputRange, "structured_output", defaults.StructuredOutput,
		StructuredJSONSchema, StructuredJSONObject, StructuredPrompt)
	return p
}

// baseURLProblem says what is wrong with a base_url, or "" when it can be
// used. The value is quoted with its credentials redacted: a diagnostic is
// printed and may be pasted into a bug report.
func baseURLProblem(raw string) string {
	const like = "like \"http://127.0.0.1:11434/v1\" or \"https://api.openai.com/v1\""
	shown := redact.URL(raw)
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("base_url %q is not a URL (%v): write an http:// or https:// URL with a host, %s.", shown, err, like)
	case u.Scheme == "" || (u.Opaque != "" && u.Scheme != "http" && u.Scheme != "https"):
		// "localhost:11434/v1" parses as scheme "localhost".
		return fmt.Sprintf("base_url %q has no scheme: start it with http:// or https://, %s.", shown, like)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("base_url %q uses the scheme %q: only http:// and https:// are supported, %s.", shown, u.Scheme, like)
	case u.Opaque != "" || u.Host == "":
		return fmt.Sprintf("base_url %q has no host: write %s://HOST[:PORT]/PATH, %s.", shown, u.Scheme, like)
	case u.Hostname() == "":
		return fmt.Sprintf("base_url %q has a port but no host name, %s.", shown, like)
	case strings.HasSuffix(u.Host, ":"):
		return fmt.Sprintf("base_url %q has a colon but no port after it (it would silently use port %s): write the port, like \"http://127.0.0.1:11434/v1\", or drop the colon for the scheme's default.", shown, map[string]string{"http": "80", "https": "443"}[u.Scheme])
	case u.Port() != "":
		if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("base_url %q has port %s: a port is a number from 1 to 65535.", shown, u.Port())
		}
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Sprintf("base_url %q has a #fragment, which is never sent to a server: remove it.", shown)
	}
	return ""
}

func providerNames(cfg *Config) []string {
	var n []string
	for _, p := range cfg.Providers {
		n = append(n, p.Name)
	}
	return n
}

func modelNames(cfg *Config) []string {
	var n []string
	for _, m := range cfg.Models {
		n = append(n, m.Name)
	}
	return n
}

func agentNames(cfg *Config) []string {
	var n []string
	for _, a := range cfg.Agents {
		n = append(n, a.Name)
	}
	return n
}

// reference resolves an optional reference to a block of kind: when unset
// and exactly one such block exists, that one; otherwise it reports the
// missing or unknown name.
func (b *builder) reference(owner string, v string, r, defRange hcl.Range, attr, kind string, names []string) string {
	if !present(r) {
		switch len(names) {
		case 1:
			return names[0]
		case 0:
			b.errorf(defRange, "Missing "+attr, "%s needs a %s, and no %s block is declared; add one: %s \"NAME\" { ... }.", owner, kind, kind, kind)
		default:
			b.errorf(defRange, "Missing "+attr, "%s needs %s = \"NAME\" naming one of the declared %ss: %s.", owner, attr, kind, quoteList(names))
		}
		return ""
	}
	if !b.set(r) {
		return ""
	}
	for _, n := range names {
		if n == v {
			return v
		}
	}
	if len(names) == 0 {
		b.errorf(r, "Unknown "+kind, "No %s named %q is declared, and there are no %s blocks; add %s %q { ... }.", kind, v, kind, kind, v)
	} else {
		b.errorf(r, "Unknown "+kind, "No %s named %q is declared.%s", kind, v, didYouMean(v, names, kind+"s"))
	}
	return ""
}

func (b *builder) model(rm *rawModel, cfg *Config) *Model {
	m := &Model{Name: rm.Name, ID: rm.Name, DefRange: rm.DefRange}
	if rm.Provider == ProviderMCPClient && b.set(rm.ProviderRange) {
		m.Provider = ProviderMCPClient
	} else {
		m.Provider = b.reference(fmt.Sprintf("model %q", rm.Name), rm.Provider, rm.ProviderRange, rm.DefRange, "provider", "provider", providerNames(cfg))
	}
	if b.set(rm.IDRange) {
		if strings.TrimSpace(rm.ID) == "" {
			b.errorf(rm.IDRange, "Invalid name", "name is the model id sent to the provider, like \"gpt-4o-mini\"; remove it to use the block label %q.", rm.Name)
		} else {
			m.ID = rm.ID
		}
	}
	b.intAtLeast(rm.ContextWindow, rm.ContextWindowRange, "context_window", 0, &m.ContextWindow,
		"context_window is the model's context size in tokens and cannot be negative; remove it to turn compaction off.")
	if rm.Temperature != nil && b.set(rm.TemperatureRange) {
		if t := *rm.Temperature; t < 0 || t > 2 {
			b.errorf(rm.TemperatureRange, "Invalid temperature", "temperature must be between 0 and 2; remove it to use the server's default.")
		} else {
			m.Temperature = &t
		}
	}
	b.intAtLeast(rm.MaxTokens, rm.MaxTokensRange, "max_tokens", 1, &m.MaxTokens,
		"max_tokens caps the completion tokens of a response and must be at least 1; remove it for no cap.")
	m.Price = b.price(rm.Price)
	return m
}

// agentExtra carries what agentRefs needs beyond the Agent.
type agentExtra struct {
	subRanges    []hcl.Range
	defaultRange hcl.Range
	costRange    hcl.Range // the cost attribute, for the price check
}

func (b *builder) agent(ra *rawAgent, cfg *Config) (*Agent, agentExtra) {
	a := &Agent{
		Name:           ra.Name,
		Description:    ra.Description,
		Prompt:         ra.Prompt,
		Default:        ra.Default,
		MaxStepsPrompt: ra.MaxStepsPrompt,
		BudgetPrompt:   ra.BudgetPrompt,
		TokensPrompt:   ra.TokensPrompt,
		CostPrompt:     ra.CostPrompt,
		DoomLoopPrompt: ra.DoomLoopPrompt,
		DoomLoop:       DoomLoop{Threshold: defaults.DoomThreshold, Action: defaults.DoomAction},
		DefRange:       ra.DefRange,
	}
	var ex agentExtra
	ex.defaultRange = ra.DefaultRange
	if !toolname.Valid(ra.Name) {
		b.errorf(ra.NameRange, "Invalid agent name",
			"Agent names are offered to models as tool names when the agent is a subagent, so they must match %s; try %q.", toolname.Pattern, toolname.Fix(ra.Name))
	}
	a.Model = b.reference(fmt.Sprintf("agent %q", ra.Name), ra.Model, ra.ModelRange, ra.DefRange, "model", "model", modelNames(cfg))

	if ra.Steps != nil && b.set(ra.StepsRange) {
		switch s := *ra.Steps; {
		case s < 1:
			b.errorf(ra.StepsRange, "Invalid steps", "steps must be at least 1; steps = 1 makes a text-only agent (no tools).")
		case s > cfg.Host.MaxSteps:
			b.warnf(ra.StepsRange, "steps above host.max_steps",
				"steps = %d is above host.max_steps = %d, so the agent stops after %d steps; raise host.max_steps or lower steps.", s, cfg.Host.MaxSteps, cfg.Host.MaxSteps)
			a.Steps = &s
		default:
			a.Steps = &s
		}
	}
	if ra.Budget != nil && b.set(ra.BudgetRange) {
		if n := *ra.Budget; n < 1 {
			b.errorf(ra.BudgetRange, "Invalid budget", "budget is the number of tool calls allowed and must be at least 1; remove it for an unlimited budget, or set steps = 1 for an agent without tools.")
		} else {
			a.Budget = &n
		}
	}
	b.agentSpend(a, ra, &ex)
	a.Tools, a.ToolRanges = b.nameList(ra.Tools, ra.ToolsRange, "tools", "tool")
	for i, t := range a.Tools {
		if !toolname.Valid(t) {
			try := toolname.Fix(t)
			// "fs.read_text_file": the tool of mcp_server "fs" is
			// fs__read_text_file.
			if server, tool, ok := strings.Cut(t, "."); ok && cfg.MCPServer(server) != nil {
				try = fmt.Sprintf("%s (the tools of an mcp_server are named SERVER%sTOOL, or by its tool_prefix and rename)", strconv.Quote(cfg.MCPServer(server).ToolName(tool)), MCPToolSep)
			} else {
				try = strconv.Quote(try)
			}
			b.errorf(a.ToolRanges[i], "Invalid tool name",
				"Tool names sent to a model must match %s (letters, digits, _ and -, at most 64); try %s.", toolname.Pattern, try)
		}
	}
	a.Subagents, ex.subRanges = b.nameList(ra.Subagents, ra.SubagentsRange, "subagents", "subagent")

	if d := ra.DoomLoop; d != nil {
		b.intAtLeast(d.Threshold, d.ThresholdRange, "threshold", 2, &a.DoomLoop.Threshold,
			"threshold is the number of identical consecutive tool calls that make a doom loop and must be at least 2 (the default is %d).", defaults.DoomThreshold)
		a.DoomLoop.Action = oneOf(b, d.Action, d.ActionRange, "action", defaults.DoomAction, DoomWarn, DoomStop, DoomAsk)
	}
	b.approve(a, ra)
	if present(ra.OutputSchemaRange) {
		a.OutputSchema = b.outputSchema(ra.OutputSchema, ra.OutputSchemaRange)
	}
	return a, ex
}

// nameList decodes a list of names (tools, subagents) element by element,
// keeping each element's range. Duplicates are errors.
func (b *builder) nameList(expr hcl.Expression, r hcl.Range, attr, what string) ([]string, []hcl.Range) {
	if !present(r) {
		return nil, nil
	}
	elems, diags := hcl.ExprList(expr)
	if diags.HasErrors() {
		for _, d := range diags {
			d.Detail = fmt.Sprintf("%s must be a list of names, like %s = [\"a\", \"b\"].", attr, attr)
		}
		b.decoded(diags)
		return nil, nil
	}
	var names []string
	var ranges []hcl.Range
	seen := map[string]hcl.Range{}
	for _, e := range elems {
		v, diags := e.Value(b.ctx)
		if diags.HasErrors() {
			b.decoded(diags)
			continue
		}
		s, err := convert.Convert(v, cty.String)
		if err != nil || s.IsNull() || !s.IsKnown() {
			b.errorf(e.Range(), "Invalid "+what+" name", "%s must be a list of names (strings), like %s = [\"a\", \"b\"].", attr, attr)
			continue
		}
		name := s.AsString()
		if first, ok := seen[name]; ok {
			b.errorf(e.Range(), "Duplicate "+what, "%q is already listed in %s at column %d; remove one.", name, attr, first.Start.Column)
			continue
		}
		seen[name] = e.Range()
		names = append(names, name)
		ranges = append(ranges, e.Range())
	}
	return names, ranges
}

// agentRefs checks what needs every agent: subagent references, cycles,
// name collisions, the default agent, and that one agent exists.
func (b *builder) agentRefs(cfg *Config, body hcl.Body, extras []agentExtra) {
	if len(cfg.Agents) == 0 {
		r := body.MissingItemRange()
		r.Start, r.End = hcl.InitialPos, hcl.InitialPos
		b.errorf(r, "No agents", "The config declares no agent. Add one, e.g.\n  agent \"build\" {\n    model  = \"default\"\n    prompt = \"You are a careful software engineer.\"\n  }\nor run \"agenthost init\" for a starter config.")
		return
	}
	names := agentNames(cfg)
	index := map[string]int{}
	for i, a := range cfg.Agents {
		index[a.Name] = i
	}
	// edges[i] = indexes of the known subagents of agent i, with the range
	// of each reference.
	type edge struct {
		to int
		r  hcl.Range
	}
	edges := make([][]edge, len(cfg.Agents))
	var firstDefault *Agent
	for i, a := range cfg.Agents {
		ex := extras[i]
		tools := map[string]bool{}
		for _, t := range a.Tools {
			tools[t] = true
		}
		for j, s := range a.Subagents {
			r := ex.subRanges[j]
			k, ok := index[s]
			if !ok {
				b.errorf(r, "Unknown subagent", "No agent named %q is declared.%s", s, didYouMean(s, names, "agents"))
				continue
			}
			if tools[s] {
				b.errorf(r, "Subagent name collides with a tool",
					"%q is both a tool and a subagent of agent %q, and a model could not tell them apart; remove it from tools or from subagents.", s, a.Name)
			}
			edges[i] = append(edges[i], edge{k, r})
		}
		if a.Default {
			if firstDefault != nil {
				b.errorf(ex.defaultRange, "Several default agents",
					"Agent %q is already the default (line %d); set default = true on one agent only.", firstDefault.Name, firstDefault.DefRange.Start.Line)
			} else {
				firstDefault = a
			}
		}
	}

	// Cycles: depth-first search in declaration order; a reference to an
	// agent on the current path closes a cycle, reported once at that
	// reference.
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(cfg.Agents))
	var path []int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		path = append(path, i)
		for _, e := range edges[i] {
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				start := 0
				for path[start] != e.to {
					start++
				}
				var cycle []string
				for _, k := range path[start:] {
					cycle = append(cycle, cfg.Agents[k].Name)
				}
				cycle = append(cycle, cfg.Agents[e.to].Name)
				b.errorf(e.r, "Subagent cycle",
					"Agents call each other in a cycle: %s. Remove %q from the subagents of %q.",
					strings.Join(cycle, " → "), cfg.Agents[e.to].Name, cfg.Agents[i].Name)
			}
		}
		path = path[:len(path)-1]
		color[i] = black
	}
	for i := range cfg.Agents {
		if color[i] == white {
			visit(i)
		}
	}
}
