package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Options tune Load and Parse.
type Options struct {
	// LookupEnv reads environment variables for env(); nil = os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Files, when non-nil, receives every parsed file by name, also when
	// loading fails, so that WriteDiagnostics can print source lines.
	Files map[string]*hcl.File
	// Partial makes Load return the config as far as it was built, with
	// its errors, when every error lies inside a provider, model or agent
	// block: the host, plugins and MCP servers are then whole, so what
	// tools they offer can still be checked (validate does, so that one
	// error does not hide another). The config is not fit to run.
	Partial bool
}

// Load parses, decodes and validates the file at path. It returns every
// problem of the file at once, sorted by position; cfg is nil when
// diags.HasErrors(), but for a partial config (Options.Partial). Diagnostics name the file by its absolute path
// (WriteDiagnostics shortens it).
func Load(path string, opts Options) (*Config, hcl.Diagnostics) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		detail := fmt.Sprintf("Reading %s: %v.", path, err)
		if os.IsNotExist(err) {
			detail = fmt.Sprintf("There is no config file %s. Give another path, or run \"agenthost init\" to write a starter agents.hcl.", path)
		}
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read config file",
			Detail:   detail,
		}}
	}
	return Parse(src, abs, opts)
}

// LoadFiles is Load that also returns the parsed files (even when loading
// fails), for WriteDiagnostics.
func LoadFiles(path string, opts Options) (*Config, map[string]*hcl.File, hcl.Diagnostics) {
	if opts.Files == nil {
		opts.Files = map[string]*hcl.File{}
	}
	cfg, diags := Load(path, opts)
	return cfg, opts.Files, diags
}

// Parse is Load on in-memory source: filename names the file in
// diagnostics, and its directory is the base of relative paths.
func Parse(src []byte, filename string, opts Options) (*Config, hcl.Diagnostics) {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if file != nil && opts.Files != nil {
		opts.Files[filename] = file
	}
	if diags.HasErrors() || file == nil {
		for _, d := range diags {
			if d.Summary == "Invalid single-argument block definition" && d.Subject != nil {
				d.Detail = "HCL allows one attribute in a one-line block; put each attribute on its own line:\n" + oneLineBlock(src, d.Subject.Start.Line)
			}
		}
		return nil, SortDiagnostics(diags)
	}
	absFile, err := filepath.Abs(filename)
	if err != nil {
		absFile = filename
	}
	fns := Functions(filepath.Dir(absFile), opts.LookupEnv)
	var inputs []string
	fns["file"] = recordReads(fns["file"], filepath.Dir(absFile), &inputs)
	b := &builder{
		dir:  filepath.Dir(absFile),
		file: filename,
		ctx:  &hcl.EvalContext{Functions: fns},
	}
	b.diags = diags
	cfg := b.build(file.Body)
	cfg.File = absFile
	cfg.Dir = b.dir
	cfg.Files = map[string]*hcl.File{filename: file}
	sort.Strings(inputs)
	cfg.Inputs = inputs
	if b.diags.HasErrors() {
		if opts.Partial && errorsOnlyIn(file.Body, b.diags, "provider", "model", "agent") {
			return cfg, SortDiagnostics(b.diags)
		}
		return nil, SortDiagnostics(b.diags)
	}
	return cfg, SortDiagnostics(b.diags)
}

// errorsOnlyIn reports whether every error of diags has a subject inside a
// top-level block of one of the types.
func errorsOnlyIn(body hcl.Body, diags hcl.Diagnostics, types ...string) bool {
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		return false
	}
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		if d.Subject == nil {
			return false
		}
		inside := false
		for _, blk := range syn.Blocks {
			r := blk.Range()
			if slices.Contains(types, blk.Type) && d.Subject.Filename == r.Filename &&
				d.Subject.Start.Byte >= r.Start.Byte && d.Subject.End.Byte <= r.End.Byte {
				inside = true
				break
			}
		}
		if !inside {
			return false
		}
	}
	return true
}

// recordReads wraps the file function: every file it reads is appended to
// *read (absolute, once), so the host can keep plugins from changing what
// the next run will read.
func recordReads(file function.Function, baseDir string, read *[]string) function.Function {
	return function.New(&function.Spec{
		Description: file.Description(),
		Params:      file.Params(),
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := file.Call(args)
			if err != nil {
				return v, err
			}
			p := args[0].AsString()
			if !filepath.IsAbs(p) {
				p = filepath.Join(baseDir, p)
			}
			p = filepath.Clean(p)
			if !slices.Contains(*read, p) {
				*read = append(*read, p)
			}
			return v, nil
		},
	})
}

// SortDiagnostics orders diagnostics by file and position; those without a
// subject come first. The order of equal positions is kept.
func SortDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}

// builder decodes one file: gohcl decodes the structure (raw* types), then
// each block is checked and converted, then references are resolved.
type builder struct {
	dir   string
	file  string
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
	// decodeErrs are the subjects of decoding errors: a value that failed
	// to decode is not checked again (one problem, one diagnostic).
	decodeErrs []hcl.Range
}

func (b *builder) add(sev hcl.DiagnosticSeverity, subject hcl.Range, summary, detail string) {
	d := &hcl.Diagnostic{Severity: sev, Summary: summary, Detail: detail}
	if subject.Filename != "" {
		d.Subject = subject.Ptr()
	}
	b.diags = append(b.diags, d)
}

func (b *builder) errorf(subject hcl.Range, summary, format string, a ...any) {
	b.add(hcl.DiagError, subject, summary, fmt.Sprintf(format, a...))
}

func (b *builder) warnf(subject hcl.Range, summary, format string, a ...any) {
	b.add(hcl.DiagWarning, subject, summary, fmt.Sprintf(format, a...))
}

// decoded appends decoding diagnostics and remembers where they point.
func (b *builder) decoded(diags hcl.Diagnostics) {
	kept := diags[:0]
	for _, d := range diags {
		// A function that failed yields an unknown value, which gohcl
		// reports again as "value must be known": keep only the cause.
		if d.Summary == "Unsuitable value type" && strings.Contains(d.Detail, "value must be known") {
			continue
		}
		kept = append(kept, d)
	}
	diags = kept
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			b.decodeErrs = append(b.decodeErrs, *d.Subject)
		}
	}
	b.diags = append(b.diags, diags...)
}

// intAtLeast sets *dst to the integer attribute attr (v, at r) when it is
// set and at least min; a smaller value is an error "Invalid <attr>" with
// the detail format (and args).
func (b *builder) intAtLeast(v *int, r hcl.Range, attr string, min int, dst *int, format string, args ...any) {
	if v == nil || !b.set(r) {
		return
	}
	if *v < min {
		b.errorf(r, "Invalid "+attr, format, args...)
		return
	}
	*dst = *v
}

// set reports whether an attribute range was filled in by gohcl (the
// attribute is present) and its value decoded without error.
func (b *builder) set(r hcl.Range) bool {
	if r.Filename == "" {
		return false
	}
	for _, e := range b.decodeErrs {
		if e.Filename == r.Filename && e.Start.Byte >= r.Start.Byte && e.Start.Byte <= r.End.Byte {
			return false
		}
	}
	return true
}

// present reports whether an attribute range was filled in, decoded or not.
func present(r hcl.Range) bool { return r.Filename != "" }

// abs resolves p against the config file's directory.
func (b *builder) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(b.dir, p)
}

// declared checks that name is unique among the blocks of one kind: the
// second declaration is an error that points at the first.
func (b *builder) declared(kind, name string, labelRange hcl.Range, seen map[string]hcl.Range) bool {
	if strings.TrimSpace(name) == "" {
		b.errorf(labelRange, "Empty "+kind+" name", "%s %s block needs a name: %s \"NAME\" { ... }.", capital(article(kind)), kind, kind)
		return false
	}
	if first, ok := seen[name]; ok {
		b.errorf(labelRange, "Duplicate "+kind, "%s %s named %q is already declared on line %d; rename or remove one of them.", capital(article(kind)), kind, name, first.Start.Line)
		return false
	}
	seen[name] = labelRange
	return true
}

func (b *builder) build(body hcl.Body) *Config {
	var raw rawFile
	b.decoded(gohcl.DecodeBody(body, b.ctx, &raw))

	cfg := &Config{}
	b.host(cfg, raw.Host)
	b.temporal(cfg, raw.Temporal)

	providers := map[string]hcl.Range{}
	for _, rp := range raw.Providers {
		if rp.Name == ProviderMCPClient {
			b.errorf(rp.NameRange, "Reserved provider name",
				"provider %q names the MCP client that calls a served agent (model blocks use it as provider = %q without a provider block); give this provider block another name.", ProviderMCPClient, ProviderMCPClient)
			continue
		}
		if b.declared("provider", rp.Name, rp.NameRange, providers) {
			p := b.provider(rp)
			p.APIKeyEnv = envReads(body, "provider", rp.Name, "api_key")
			b.literalAPIKey(body, rp.Name)
			cfg.Providers = append(cfg.Providers, p)
		}
	}
	models := map[string]hcl.Range{}
	for _, rm := range raw.Models {
		if b.declared("model", rm.Name, rm.NameRange, models) {
			m := b.model(rm, cfg)
			m.IDEnv = envReads(body, "model", rm.Name, "name")
			cfg.Models = append(cfg.Models, m)
		}
	}
	plugins := map[string]hcl.Range{}
	cliTools := map[string]hcl.Range{}
	for _, rp := range raw.Plugins {
		if b.declared("plugin", rp.Name, rp.NameRange, plugins) {
			cfg.Plugins = append(cfg.Plugins, b.plugin(rp, cliTools))
		}
	}
	// Plugins and MCP servers share one namespace: both name where a
	// tool comes from.
	for _, rs := range raw.MCPServers {
		if first, ok := plugins[rs.Name]; ok {
			b.errorf(rs.NameRange, "Duplicate plugin or MCP server name", "A plugin or mcp_server named %q is already declared on line %d; plugins and MCP servers share one set of names: rename one of them.", rs.Name, first.Start.Line)
			continue
		}
		if b.declared("mcp_server", rs.Name, rs.NameRange, plugins) {
			cfg.MCPServers = append(cfg.MCPServers, b.mcpServer(rs))
		}
	}
	agents := map[string]hcl.Range{}
	var extras []agentExtra
	for _, ra := range raw.Agents {
		if b.declared("agent", ra.Name, ra.NameRange, agents) {
			a, ex := b.agent(ra, cfg)
			cfg.Agents = append(cfg.Agents, a)
			extras = append(extras, ex)
		}
	}
	if len(raw.Agents) == 0 || len(cfg.Agents) > 0 {
		b.agentRefs(cfg, body, extras)
		b.prices(cfg, extras)
	}
	return cfg
}

// envReads lists the environment variables that attribute attr of the
// first block of type typ labelled label reads with env(), in order, each
// once. Only names written as literals count: env("OPENAI_API_KEY", "").
func envReads(body hcl.Body, typ, label, attr string) []string {
	a := blockAttr(body, typ, label, attr)
	if a == nil {
		return nil
	}
	var names []string
	hclsyntax.VisitAll(a.Expr, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "env" || len(call.Args) == 0 {
			return nil
		}
		v, diags := call.Args[0].Value(nil)
		if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
			return nil
		}
		if name := v.AsString(); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
		return nil
	})
	return names
}

// blockAttr is attribute attr of the first block of type typ labelled
// label, as written; nil when it is not there.
func blockAttr(body hcl.Body, typ, label, attr string) *hclsyntax.Attribute {
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	for _, blk := range syn.Blocks {
		if blk.Type == typ && len(blk.Labels) > 0 && blk.Labels[0] == label {
			return blk.Body.Attributes[attr]
		}
	}
	return nil
}

// literalAPIKey warns about a provider's api_key written in the file: a
// key that is neither read with env() nor computed from anything is a
// secret in a file that is shared, committed and shown.
func (b *builder) literalAPIKey(body hcl.Body, provider string) {
	a := blockAttr(body, "provider", provider, "api_key")
	if a == nil || len(a.Expr.Variables()) > 0 {
		return
	}
	calls := false
	hclsyntax.VisitAll(a.Expr, func(n hclsyntax.Node) hcl.Diagnostics {
		if _, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			calls = true
		}
		return nil
	})
	if calls {
		return
	}
	if v, diags := a.Expr.Value(nil); diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String || v.AsString() == "" {
		return
	}
	b.warnf(a.SrcRange, "API key written in the config",
		"api_key of provider %q is a literal: anyone who reads this file (or its repository, or a paste of it) has the key. Read it from the environment instead: api_key = env(\"OPENAI_API_KEY\"), and set that variable where agenthost runs.", provider)
	// The snippet shows the attribute, not the key.
	b.diags[len(b.diags)-1].Extra = secretValue{a.Expr.Range()}
}

// article is "an" before a word that starts with a vowel sound and "a"
// otherwise; the words it sees are our own block and kind names.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

// capital upper-cases the first letter of an ASCII word.
func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
