package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/internal/wasmbin"
	"github.com/agenthost/agenthost/loop"
)

// Info is what Inspect reports about a .wasm file.
type Info struct {
	// Kind is "agenthost", "wasi_cli" (a WASI command without a manifest),
	// "extism" or "component"; "" when the module cannot run here (see
	// Problems).
	Kind   Kind   `json:"kind"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Registry is set for a module fetched from an OCI registry (an
	// oci:// source): the digest of its manifest and its layout.
	Registry *Fetched `json:"registry,omitempty"`
	// Imports are "module.name" of every imported function and memory;
	// for a component, the imported interfaces.
	Imports []string `json:"imports"`
	// Exports are the exported function names, sorted; for a component,
	// its tools in export order.
	Exports []string `json:"exports"`
	// World is the world of a component (see World).
	World *World `json:"world,omitempty"`
	// Dialect is the dialect of an Extism plugin.
	Dialect Dialect `json:"dialect,omitempty"`
	// Manifest and ManifestSource ("custom section" or "describe") are set
	// for agenthost plugins.
	Manifest       *Manifest       `json:"manifest,omitempty"`
	ManifestSource string          `json:"manifest_source,omitempty"`
	Tools          []loop.ToolSpec `json:"tools,omitempty"`
	// Detection says how the kind was found when the module has no
	// manifest section: what was run, if anything.
	Detection string `json:"detection,omitempty"`
	// Problems say why the module cannot be loaded, or why describe failed.
	Problems []string `json:"problems,omitempty"`
}

// Inspect reports on a .wasm file without running any tool: kind, imports,
// exports, manifest and tools. Without a manifest section it runs describe
// mode, in a sandbox with nothing granted, the default limits and a short
// timeout (detectTimeout), unless the module cannot read AGENTHOST_MODE. A
// WASI 0.2 component is loaded (compiled, not run) to report its world. It
// fails for bytes that are not WebAssembly (ErrNotWasm), a malformed
// component, or a module that does not compile.
func Inspect(ctx context.Context, r *Runtime, wasm []byte) (*Info, error) {
	sum := sha256.Sum256(wasm)
	info := &Info{Size: len(wasm), SHA256: hex.EncodeToString(sum[:]), Imports: []string{}, Exports: []string{}}
	i := &inspecting{r: r, wasm: wasm, limits: withDefaults(Limits{})}
	bin, err := parseBinary(wasm)
	if errors.Is(err, ErrComponent) {
		if err := componentKindOf().inspect(ctx, i, info); err != nil {
			return nil, err
		}
		return info, nil
	}
	if err != nil {
		return nil, err
	}
	patched, err := wasmbin.LimitMemory(wasm, bin, memoryPages(i.limits.Memory))
	if err != nil {
		return nil, err
	}
	cm, err := r.rt.CompileModule(ctx, patched)
	if err != nil {
		return nil, err
	}
	defer cm.Close(ctx)
	for _, f := range cm.ImportedFunctions() {
		info.Imports = append(info.Imports, importName(f))
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		info.Imports = append(info.Imports, mod+"."+name)
	}
	for name := range cm.ExportedFunctions() {
		info.Exports = append(info.Exports, name)
	}
	sort.Strings(info.Exports)
	// What a load with no kind declared would learn of the module.
	i.cm, i.bin = cm, bin
	i.facts = coreFacts(cm, bin)
	if err := r.checkImports(cm); err != nil {
		if i.facts.Extism { // an Extism plugin, whose imports are refused
			info.Kind = KindExtism
		}
		info.Problems = append(info.Problems, splitJoined(err)...)
		return info, nil
	}
	if err := detectKind(i.facts, &Spec{}).inspect(ctx, i, info); err != nil {
		return nil, err
	}
	return info, nil
}

// String renders the report for a terminal, one fact per line.
func (info *Info) String() string {
	var b strings.Builder
	kind := info.Kind
	if kind == "" {
		kind = "unusable"
	}
	fmt.Fprintf(&b, "kind:     %s\n", kind)
	if info.Dialect != "" {
		fmt.Fprintf(&b, "dialect:  %s\n", info.Dialect)
	}
	fmt.Fprintf(&b, "size:     %d bytes\n", info.Size)
	fmt.Fprintf(&b, "sha256:   %s\n", info.SHA256)
	if f := info.Registry; f != nil {
		fmt.Fprintf(&b, "registry: %s, manifest %s (%s)\n", f.Source, f.Manifest, f.Layout)
	}
	if m := info.Manifest; m != nil {
		fmt.Fprintf(&b, "manifest: %s (from %s)", m.Protocol, info.ManifestSource)
		if m.Name != "" {
			fmt.Fprintf(&b, ", %s", m.Name)
			if m.Version != "" {
				fmt.Fprintf(&b, " %s", m.Version)
			}
		}
		b.WriteString("\n")
		if m.Description != "" {
			fmt.Fprintf(&b, "          %s\n", m.Description)
		}
	}
	if len(info.Tools) > 0 {
		b.WriteString("tools:\n")
		for _, t := range info.Tools {
			fmt.Fprintf(&b, "  %s", t.Name)
			if t.Description != "" {
				fmt.Fprintf(&b, ": %s", firstLine(t.Description))
			}
			b.WriteString("\n")
		}
	}
	if m := info.Manifest; m != nil {
		r := m.Requests
		if len(r.FS)+len(r.Env) > 0 || r.Clock || r.Random {
			b.WriteString("requests:\n")
			for _, f := range r.FS {
				guest := f.Guest
				if guest == AnyMount {
					guest = "* (every mount)"
				}
				fmt.Fprintf(&b, "  fs %s (%s)%s\n", guest, access(f.Access), reason(f.Reason))
			}
			for _, e := range r.Env {
				fmt.Fprintf(&b, "  env %s%s\n", e.Key, reason(e.Reason))
			}
			if r.Clock {
				b.WriteString("  clock\n")
			}
			if r.Random {
				b.WriteString("  random\n")
			}
		}
	}
	if info.World != nil {
		info.World.write(&b)
	}
	if info.Detection != "" {
		fmt.Fprintf(&b, "detected: %s\n", info.Detection)
	}
	fmt.Fprintf(&b, "imports:  %s\n", listOrNone(info.Imports))
	fmt.Fprintf(&b, "exports:  %s\n", listOrNone(info.Exports))
	for _, p := range info.Problems {
		fmt.Fprintf(&b, "problem:  %s\n", p)
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

func importName(f api.FunctionDefinition) string {
	mod, name, _ := f.Import()
	return mod + "." + name
}

// splitJoined flattens an errors.Join into its messages.
func splitJoined(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}
