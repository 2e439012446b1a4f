package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/ociref"
	"github.com/agenthost/agenthost/internal/pluginkind"
	"github.com/agenthost/agenthost/internal/sandbox"
	"github.com/agenthost/agenthost/internal/toolname"
	"github.com/agenthost/agenthost/internal/wasmbin"
)

// Builtins are the plugin names accepted in source = "builtin:NAME".
var Builtins = []string{"core"}

const builtinPrefix = "builtin:"

// Wasm header facts: the magic, the version of core modules, and the layer
// field that marks a component (WASI 0.2).
const (
	minMemory = 64 << 10 // one WebAssembly page
	maxMemory = 4 << 30  // the wasm32 maximum
)

// PluginKinds are the values of a plugin block's kind: the rows of
// internal/pluginkind, which host/plugin's Kinds are too.
var PluginKinds = func() []PluginKind {
	var out []PluginKind
	for _, n := range pluginkind.Names() {
		out = append(out, PluginKind(n))
	}
	return out
}()

// implied is the kind the mark m implies (internal/pluginkind).
func implied(m pluginkind.Mark) PluginKind { return PluginKind(pluginkind.Implied(m)) }

func (b *builder) plugin(rp *rawPlugin, cliTools map[string]hcl.Range) *Plugin {
	p := &Plugin{
		Name:     rp.Name,
		Source:   rp.Source,
		Env:      rp.Env,
		Clock:    rp.Clock,
		Random:   rp.Random,
		DefRange: rp.DefRange,
		Limits: Limits{
			Memory:    defaults.Memory,
			Timeout:   defaults.Timeout,
			MaxOutput: defaults.MaxOutput,
			MaxWrite:  defaults.MaxWrite,
			MaxFiles:  defaults.MaxFiles,
		},
	}
	if b.set(rp.KindRange) {
		p.Kind = oneOf(b, rp.Kind, rp.KindRange, "kind", "", PluginKinds...)
	}
	// A block with no kind: the first mark it has implies its kind (the
	// binary header, read by source below, overrides them all); with none,
	// the kind is detected at load.
	switch {
	case present(rp.KindRange):
	case strings.HasPrefix(rp.Source, builtinPrefix):
		p.Kind = implied(pluginkind.MarkBuiltin) // every builtin is an agenthost plugin
	case extismTools(rp):
		p.Kind = implied(pluginkind.MarkExtismAttrs) // only Extism tools name a function
	case len(rp.Tools) > 0:
		p.Kind = implied(pluginkind.MarkToolBlocks) // only wasi_cli plugins declare their tools in HCL
	}
	if b.set(rp.SHA256Range) {
		sum := strings.ToLower(strings.TrimSpace(rp.SHA256))
		if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
			b.errorf(rp.SHA256Range, "Invalid sha256", "sha256 must be 64 hex digits (the output of sha256sum FILE.wasm), not %q.", rp.SHA256)
		} else {
			p.SHA256 = sum
		}
	}
	if b.set(rp.SourceRange) {
		b.source(p, rp)
	}
	if rp.Insecure && p.OCI == nil && b.set(rp.InsecureRange) {
		b.errorf(rp.InsecureRange, "insecure on a plugin that is not fetched", "insecure = true allows plain HTTP to a registry (source = \"oci+http://HOST/REPO:TAG\"); this plugin's source is %q, which is not fetched from a registry. Remove insecure.", p.Source)
	}
	if l := rp.Limits; l != nil {
		if mem := b.size(l.Memory, l.MemoryRange, "memory", defaults.Memory); mem < minMemory || mem > maxMemory {
			b.errorf(l.MemoryRange, "Invalid memory limit", "memory must be between 64KiB (one WebAssembly page) and 4GiB (the wasm32 maximum), not %q.", l.Memory)
		} else {
			p.Limits.Memory = mem
		}
		p.Limits.Timeout = b.duration(l.Timeout, l.TimeoutRange, "timeout", defaults.Timeout)
		if out := b.size(l.MaxOutput, l.MaxOutputRange, "max_output", defaults.MaxOutput); out < 1 || out > math.MaxInt64 {
			b.errorf(l.MaxOutputRange, "Invalid max_output", "max_output must be at least 1 byte, like \"1MiB\", not %q.", l.MaxOutput)
		} else {
			p.Limits.MaxOutput = int64(out)
		}
		if w := b.size(l.MaxWrite, l.MaxWriteRange, "max_write", defaults.MaxWrite); w < 1 || w > math.MaxInt64 {
			b.errorf(l.MaxWriteRange, "Invalid max_write", "max_write is the bytes one call may write to the plugin's read-write mounts and must be at least 1 byte, like \"64MiB\", not %q; to forbid writing, make the mounts read-only (mode = \"ro\").", l.MaxWrite)
		} else {
			p.Limits.MaxWrite = int64(w)
		}
		if l.MaxFiles != nil && b.set(l.MaxFilesRange) {
			if *l.MaxFiles < 1 {
				b.errorf(l.MaxFilesRange, "Invalid max_files", "max_files is the number of files, directories and links one call may create in the plugin's read-write mounts and must be at least 1 (the default is %d), not %d.", defaults.MaxFiles, *l.MaxFiles)
			} else {
				p.Limits.MaxFiles = *l.MaxFiles
			}
		}
	}
	b.mounts(p, rp.Mounts)
	b.toolNames(&p.ToolNames, rp.ToolPrefix, rp.ToolPrefixRange, rp.Rename, rp.RenameRange)

	// What the block holds beyond the attributes every kind takes: a kind
	// that takes none of the Extism attributes (internal/pluginkind) has
	// each refused; then the kind's own checks (kindBlocks), or, for a
	// kind detected at load, the tool blocks as wasi_cli's.
	row, _ := pluginkind.Lookup(string(p.Kind))
	if !row.Config && !row.HTTP && !row.Reuse {
		b.notExtism(p, rp)
	}
	check := kindBlocks[p.Kind]
	if check == nil {
		check = (*builder).cliTools
	}
	check(b, p, rp, cliTools)
	return p
}

// kindBlocks are the checks of a plugin block particular to its kind, one
// per row of internal/pluginkind (TestKindBlocks).
var kindBlocks = map[PluginKind]func(b *builder, p *Plugin, rp *rawPlugin, cliTools map[string]hcl.Range){
	pluginkind.Agenthost: (*builder).ownTools,
	pluginkind.WASICLI:   (*builder).wasiCLI,
	pluginkind.Extism:    (*builder).extism,
	pluginkind.Component: (*builder).component,
}

// ownTools refuses the tool blocks of a kind whose module describes its
// own tools (an agenthost plugin's manifest).
func (b *builder) ownTools(p *Plugin, rp *rawPlugin, _ map[string]hcl.Range) {
	for _, t := range rp.Tools {
		b.errorf(t.DefRange, "Tool block on "+article(string(p.Kind))+" "+string(p.Kind)+" plugin",
			"%s %s plugin describes its own tools; tool blocks are only for kind = \"wasi_cli\" plugins and plain Extism plugins (kind = \"extism\"). Remove this block, or set the kind.", capital(article(string(p.Kind))), p.Kind)
	}
}

// wasiCLI checks a wasi_cli plugin's tool blocks: at least one, each a
// command line.
func (b *builder) wasiCLI(p *Plugin, rp *rawPlugin, cliTools map[string]hcl.Range) {
	if len(rp.Tools) == 0 {
		b.errorf(rp.DefRange, "No tools", "A wasi_cli plugin declares its tools in tool blocks; add one:\n  tool \"%s\" {\n    description = \"...\"\n    argv        = [\"%s\", args.input]\n  }", toolname.Fix(rp.Name), rp.Name)
		return
	}
	b.cliTools(p, rp, cliTools)
}

// cliTools reads the tool blocks as wasi_cli tools.
func (b *builder) cliTools(p *Plugin, rp *rawPlugin, cliTools map[string]hcl.Range) {
	for _, rt := range rp.Tools {
		if t := b.cliTool(rt, p, cliTools); t != nil {
			p.Tools = append(p.Tools, t)
		}
	}
}

// source resolves the plugin source and checks the file it names.
func (b *builder) source(p *Plugin, rp *rawPlugin) {
	r := rp.SourceRange
	if name, ok := strings.CutPrefix(p.Source, builtinPrefix); ok {
		known := false
		for _, n := range Builtins {
			known = known || n == name
		}
		if !known {
			b.errorf(r, "Unknown builtin plugin", "There is no builtin plugin %q; the builtins are %s.%s", name, quoteList(prefixed(Builtins)), suggestionOnly(name, Builtins))
			return
		}
		p.Builtin = name
		if p.Kind != "" && p.Kind != pluginkind.Agenthost {
			b.errorf(rp.KindRange, "Invalid kind", "The builtin plugin %q is an agenthost plugin; remove kind or set kind = \"agenthost\".", name)
		}
		if p.SHA256 != "" {
			b.errorf(rp.SHA256Range, "sha256 on a builtin plugin", "sha256 pins a plugin file; builtin plugins are part of agenthost itself. Remove sha256.")
		}
		return
	}
	if strings.TrimSpace(p.Source) == "" {
		b.errorf(r, "Empty source", "source is a path to a .wasm file (relative to the config file's directory), a builtin like \"builtin:core\" or a registry reference like \"oci://ghcr.io/OWNER/PLUGIN:TAG\".")
		return
	}
	if ociref.IsOCI(p.Source) {
		b.ociSource(p, rp)
		return
	}
	p.Path = b.abs(p.Source)
	fi, err := os.Stat(p.Path)
	switch {
	case os.IsNotExist(err):
		b.errorf(r, "Plugin file not found", "There is no file %s; source paths are relative to the config file's directory. Build the plugin or fix the path.", p.Path)
		return
	case err != nil:
		b.errorf(r, "Cannot read plugin file", "Reading %s: %v.", p.Path, err)
		return
	case fi.IsDir():
		b.errorf(r, "Plugin source is a directory", "%s is a directory; source must name a .wasm file.", p.Path)
		return
	}
	f, err := os.Open(p.Path)
	if err != nil {
		b.errorf(r, "Cannot read plugin file", "Reading %s: %v.", p.Path, err)
		return
	}
	defer f.Close()
	var head [8]byte
	n, _ := io.ReadFull(f, head[:])
	hdr := wasmbin.ReadHeader(head[:n])
	switch {
	case hdr == wasmbin.HeaderNotWasm:
		b.errorf(r, "Not a WebAssembly file", "%s does not start with the WebAssembly magic bytes \\0asm; source must be a .wasm module built for wasm32-wasip1 (e.g. GOOS=wasip1 GOARCH=wasm go build -o tool.wasm).", p.Source)
		return
	case hdr == wasmbin.HeaderTruncated:
		b.errorf(r, "Truncated WebAssembly file", "%s ends inside its 8-byte header; rebuild it.", p.Source)
		return
	case hdr == wasmbin.HeaderComponent:
		// The layer field marks a component: its kind is "component".
		switch header := implied(pluginkind.MarkHeader); p.Kind {
		case "", header:
			p.Kind = header
		default:
			if present(rp.KindRange) {
				b.errorf(rp.KindRange, "Invalid kind", "%s is a WASI 0.2 component, not %s %s plugin; set kind = \"component\" or remove kind (a component's kind is detected).", p.Source, article(string(p.Kind)), p.Kind)
			} else {
				p.Kind = header // the component checks refuse what does not fit
			}
		}
	case p.Kind == implied(pluginkind.MarkHeader):
		b.errorf(rp.KindRange, "Invalid kind", "%s is a core WebAssembly module, not a WASI 0.2 component (wasm32-wasip2, jco/ComponentizeJS, ...); remove kind = \"component\" or set the kind it is.", p.Source)
	case hdr == wasmbin.HeaderOtherVersion:
		b.errorf(r, "Unsupported WebAssembly version", "%s has WebAssembly binary version %d; agenthost runs version 1 core modules built for wasm32-wasip1.", p.Source, binary.LittleEndian.Uint32(head[4:8]))
		return
	}
	if p.SHA256 == "" {
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		b.errorf(r, "Cannot read plugin file", "Reading %s: %v.", p.Path, err)
		return
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		b.errorf(r, "Cannot read plugin file", "Reading %s: %v.", p.Path, err)
		return
	}
	if err := sandbox.CheckPin(p.Source, hex.EncodeToString(h.Sum(nil)), p.SHA256); err != nil {
		b.errorf(rp.SHA256Range, "Checksum mismatch", "%v", err)
	}
}

// ociSource checks a registry source: how it is written, and the
// transport rule (internal/ociref), before anything is contacted. The
// artifact is fetched and checked when the plugin loads.
func (b *builder) ociSource(p *Plugin, rp *rawPlugin) {
	ref, err := ociref.Parse(p.Source)
	if err != nil {
		b.errorf(rp.SourceRange, "Invalid registry source", "%v.", err)
		return
	}
	if err := ref.CheckTransport(rp.Insecure); err != nil {
		b.errorf(rp.SourceRange, "Plain HTTP to a remote registry", "%v.", err)
		return
	}
	p.OCI, p.Insecure = &ref, rp.Insecure
}

func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = builtinPrefix + n
	}
	return out
}

func suggestionOnly(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", builtinPrefix+s)
	}
	return ""
}

func (b *builder) mounts(p *Plugin, raws []*rawMount) {
	names := map[string]hcl.Range{}
	guests := map[string]hcl.Range{}
	// dirs holds the mounts whose host directory exists, with its real
	// path, to find read-only mounts a read-write one exposes.
	type dir struct {
		m    Mount
		real string
		r    hcl.Range
	}
	var dirs []dir
	for _, rm := range raws {
		if !b.declared("mount", rm.Name, rm.NameRange, names) {
			continue
		}
		m := Mount{Name: rm.Name, Mode: defaults.MountMode, DefRange: rm.DefRange}
		if b.set(rm.HostRange) {
			m.Host = b.abs(rm.Host)
			fi, err := os.Stat(m.Host)
			switch {
			case os.IsNotExist(err):
				b.errorf(rm.HostRange, "Mount path not found", "Mount %q: the host directory %s does not exist; create it or fix host (relative paths start at the config file's directory).", rm.Name, m.Host)
			case err != nil:
				b.errorf(rm.HostRange, "Cannot read mount path", "Mount %q: %v.", rm.Name, err)
			case !fi.IsDir():
				b.errorf(rm.HostRange, "Mount path is not a directory", "Mount %q: %s is a file; a mount grants a directory.", rm.Name, m.Host)
			default:
				if real, err := filepath.EvalSymlinks(m.Host); err == nil {
					dirs = append(dirs, dir{real: real, r: rm.HostRange})
				}
			}
		}
		if b.set(rm.GuestRange) {
			if !strings.HasPrefix(rm.Guest, "/") {
				b.errorf(rm.GuestRange, "Invalid guest path", "guest is where the plugin sees the directory and must be an absolute path, like \"/%s\", not %q.", strings.TrimLeft(path.Clean("/"+rm.Guest), "/"), rm.Guest)
			} else {
				m.Guest = path.Clean(rm.Guest)
				if first, ok := guests[m.Guest]; ok {
					b.errorf(rm.GuestRange, "Duplicate guest path", "Another mount of plugin %q already uses guest %q (line %d); give each mount its own guest path.", p.Name, m.Guest, first.Start.Line)
				}
				guests[m.Guest] = rm.GuestRange
			}
		}
		m.Mode = oneOf(b, rm.Mode, rm.ModeRange, "mode", defaults.MountMode, MountRO, MountRW)
		p.Mounts = append(p.Mounts, m)
		if len(dirs) > 0 && dirs[len(dirs)-1].r == rm.HostRange {
			dirs[len(dirs)-1].m = m
		}
	}
	// A read-only mount is only read-only if no read-write mount of the
	// same plugin shows the same files.
	for _, ro := range dirs {
		if !ro.m.ReadOnly() {
			continue
		}
		for _, rw := range dirs {
			if rw.m.ReadOnly() {
				continue
			}
			rel, err := filepath.Rel(rw.real, ro.real)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
				continue
			}
			where := "the same directory as"
			through := rw.m.Guest
			if rel != "." {
				where = "inside the directory of"
				through = path.Join(rw.m.Guest, filepath.ToSlash(rel))
			}
			b.errorf(ro.r, "Read-only mount inside a read-write one",
				"Mount %q is read-only, but its directory %s is %s mount %q (line %d), which is read-write: the plugin could change it through %s. Make %q read-only too, or mount directories that do not overlap.",
				ro.m.Name, ro.m.Host, where, rw.m.Name, rw.r.Start.Line, through, rw.m.Name)
			break
		}
	}
}

func (b *builder) cliTool(rt *rawTool, p *Plugin, seen map[string]hcl.Range) *CLITool {
	if !b.declaredTool(p, rt, seen) {
		return nil
	}
	if n := p.ToolName(rt.Name); !toolname.Valid(n) {
		b.errorf(rt.NameRange, "Invalid tool name",
			"Tool names sent to a model must match %s (letters, digits, _ and -, at most 64); try %q.", toolname.Pattern, toolname.Fix(n))
	}
	t := &CLITool{
		Name:        rt.Name,
		Description: rt.Description,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		DefRange:    rt.DefRange,
	}
	var props []string
	if present(rt.InputSchemaRange) {
		t.InputSchema, props = b.inputSchema(rt.InputSchema, rt.InputSchemaRange)
	}
	if !present(rt.ArgvRange) {
		b.errorf(rt.DefRange, "Missing argv",
			"Tool %q of %s plugin %q needs argv, its command line as a list evaluated per call, e.g. argv = [\"%s\", args.input].", rt.Name, p.Kind, p.Name, p.Name)
	} else {
		t.Argv = rt.Argv
		b.callExpr(rt.Argv, "argv", props)
	}
	if present(rt.StdinRange) {
		t.Stdin = rt.Stdin
		b.callExpr(rt.Stdin, "stdin", props)
	}
	return t
}

// inputSchema evaluates an input_schema expression to JSON, checks that it
// is a JSON Schema for an object, and returns the names of its properties
// (nil when it declares none).
func (b *builder) inputSchema(expr hcl.Expression, r hcl.Range) (json.RawMessage, []string) {
	def := json.RawMessage(`{"type":"object"}`)
	v, diags := expr.Value(b.ctx)
	if diags.HasErrors() {
		b.decoded(diags)
		return def, nil
	}
	if v.IsNull() || !v.IsWhollyKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		b.errorf(r, "Invalid input_schema", "input_schema must be an object, the JSON Schema of the tool's arguments, like { type = \"object\", properties = { input = { type = \"string\" } } }.")
		return def, nil
	}
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		b.errorf(r, "Invalid input_schema", "input_schema cannot be written as JSON: %v.", err)
		return def, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.errorf(r, "Invalid input_schema", "input_schema cannot be written as JSON: %v.", err)
		return def, nil
	}
	if typ, ok := doc["type"]; !ok || typ != "object" {
		b.errorf(r, "Invalid input_schema", "input_schema must describe an object (type = \"object\"): tool arguments are a JSON object.")
		return def, nil
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		c := jsonschema.NewCompiler()
		c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network access
		if err = c.AddResource("input_schema.json", schemaDoc); err == nil {
			_, err = c.Compile("input_schema.json")
		}
	}
	if err != nil {
		b.errorf(r, "Invalid input_schema", "input_schema is not a valid JSON Schema: %v.", oneLine(err.Error()))
		return def, nil
	}
	var props []string
	if m, ok := doc["properties"].(map[string]any); ok {
		for k := range m {
			props = append(props, k)
		}
		sort.Strings(props)
	}
	return raw, props
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// callExpr checks at load time an expression evaluated per call (argv,
// stdin): it may refer only to args (and, when the input schema declares
// properties, only to those), call only pure functions, and have the right
// type.
func (b *builder) callExpr(expr hcl.Expression, attr string, props []string) {
	ok := true
	for _, tr := range expr.Variables() {
		if root := tr.RootName(); root != "args" {
			ok = false
			b.errorf(tr.SourceRange(), "Invalid reference",
				"%s is evaluated per call and can refer only to args, the call's arguments (e.g. args.input); %q is not defined there.%s", attr, root, suggestionArgs(root))
			continue
		}
		if len(tr) < 2 || props == nil {
			continue
		}
		if step, isAttr := tr[1].(hcl.TraverseAttr); isAttr && !contains(props, step.Name) {
			ok = false
			b.errorf(tr.SourceRange(), "Unknown argument",
				"args.%s is not a property of the tool's input_schema.%s", step.Name, didYouMean(step.Name, props, "properties"))
		}
	}
	if node, isSyntax := expr.(hclsyntax.Node); isSyntax {
		fns := callFunctions()
		hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
			call, isCall := n.(*hclsyntax.FunctionCallExpr)
			if !isCall {
				return nil
			}
			if _, known := fns[call.Name]; !known {
				ok = false
				b.errorf(call.NameRange, "Function not available here",
					"%s is evaluated per call, where only these functions exist: %s. (env and file run once at load time and cannot be used in %s.)", attr, callFunctionNames(), attr)
			}
			return nil
		})
	}
	if !ok {
		return
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"args": cty.DynamicVal},
		Functions: callFunctions(),
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		b.decoded(diags)
		return
	}
	ty := v.Type()
	switch attr {
	case "argv":
		switch {
		case ty == cty.DynamicPseudoType:
		case v.IsKnown() && v.IsNull():
			b.errorf(expr.Range(), "Invalid argv", "argv must be a list of strings, like [\"jq\", \"-c\", args.filter], not null.")
		case ty.IsTupleType():
			for i, et := range ty.TupleElementTypes() {
				if !(et.IsPrimitiveType() || et == cty.DynamicPseudoType) {
					r := expr.Range()
					if elems, d := hcl.ExprList(expr); !d.HasErrors() && i < len(elems) {
						r = elems[i].Range()
					}
					b.errorf(r, "Invalid argv", "argv[%d] must be a string (numbers and bools are converted), not %s; use jsonencode() to pass structured values.", i, et.FriendlyName())
				}
			}
		case ty.IsListType() || ty.IsSetType():
			if et := ty.ElementType(); !(et.IsPrimitiveType() || et == cty.DynamicPseudoType) {
				b.errorf(expr.Range(), "Invalid argv", "argv must be a list of strings, not a list of %s.", et.FriendlyName())
			}
		default:
			b.errorf(expr.Range(), "Invalid argv", "argv must be a list of strings, like [\"jq\", \"-c\", args.filter], not %s; the command line is never split by a shell.", ty.FriendlyName())
		}
	case "stdin", "input":
		if !(ty.IsPrimitiveType() || ty == cty.DynamicPseudoType) {
			b.errorf(expr.Range(), "Invalid "+attr, "%s must be a string or null, not %s; use jsonencode(...) to pass structured values.", attr, ty.FriendlyName())
		}
	}
}

func suggestionArgs(root string) string {
	if Suggest(root, []string{"args"}) == "args" {
		return " Did you mean \"args\"?"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
