package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/sandbox"
	"github.com/agenthost/agenthost/loop"
)

// The agenthost kind: a WASI preview1 command speaking agenthost/1, its
// tools described by its manifest (a custom section, or the output of a
// describe run). It is also what a core module with no kind declared, no
// Extism import and no tool blocks is taken for, once its describe run
// prints a manifest.
type agenthostKind struct{}

// agenthostPlugin is the agenthost state of a Plugin.
type agenthostPlugin struct {
	manifest *Manifest
	// manifestSource says where the manifest came from: "custom section"
	// or "describe".
	manifestSource string
	// reuse: the manifest says one instance serves many calls (reuse.go).
	// Such an instance serves every tool of the plugin: shared holds its
	// module config (no AGENTHOST_TOOL; each request names its tool) and
	// its pre-started instance.
	reuse  bool
	shared *tool
}

func (agenthostKind) name() Kind      { return KindAgenthost }
func (agenthostKind) component() bool { return false }
func (agenthostKind) prestart() bool  { return true }

// detect claims a module with a manifest section, and one without tool
// blocks (its describe run, at load, must then print a manifest).
func (agenthostKind) detect(f *loadcache.Facts, spec *Spec) bool {
	return !f.Extism && (f.Section != "" || len(spec.Tools) == 0)
}

func (agenthostKind) load(ctx context.Context, l *loading) error {
	if err := l.command(); err != nil {
		return err
	}
	p, spec, facts := l.p, &l.spec, l.facts
	if len(spec.Tools) > 0 {
		return errors.New("tool blocks are for kind \"wasi_cli\"; an agenthost plugin declares its tools in its manifest")
	}
	ah := &agenthostPlugin{}
	switch {
	case facts.Section != "":
		m, err := ParseManifest([]byte(facts.Section))
		if err != nil {
			return fmt.Errorf("%s custom section: %w", ManifestSection, err)
		}
		ah.manifest, ah.manifestSource = m, "custom section"
	case facts.Manifest != "":
		m, err := ParseManifest([]byte(facts.Manifest))
		if err != nil {
			return fmt.Errorf("cached describe output: %w", err)
		}
		ah.manifest, ah.manifestSource = m, "describe"
	default:
		dl := l.limits
		if spec.Kind == "" {
			if !facts.Environ {
				return fmt.Errorf("cannot detect the plugin kind: %w. A plain WASI command needs kind = \"wasi_cli\" and tool blocks", errNoEnv)
			}
			dl = detectLimits(l.limits)
		}
		m, out, err := l.r.describeRaw(ctx, p.mod, spec.Name, dl)
		if err != nil {
			if spec.Kind == "" {
				return detectError(err, dl.Timeout)
			}
			return err
		}
		ah.manifest, ah.manifestSource = m, "describe"
		facts.Manifest = string(out)
		l.fresh = true
	}
	p.ah = ah
	p.grants = grant(ah.manifest, *spec)
	ah.reuse = ah.manifest.Reuse
	base, err := p.baseConfig()
	if err != nil {
		return err
	}
	for _, mt := range ah.manifest.Tools {
		if err := p.addTool(mt.Name, mt.Description, mt.InputSchema, nil, base); err != nil {
			return err
		}
		p.setToolMeta(mt)
	}
	if ah.reuse {
		ah.shared = &tool{
			spec: loop.ToolSpec{Name: "(any tool)"},
			cfg:  base.WithArgs(p.name).WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_REUSE", "1"),
			warm: make(chan *instance, 1),
		}
	}
	return nil
}

// inspect reads the manifest from the module's section or, without one,
// from a describe run with nothing granted and a short timeout; a module
// that cannot read AGENTHOST_MODE, or whose describe run gives no
// manifest, is a plain WASI command (wasi_cli).
func (agenthostKind) inspect(ctx context.Context, i *inspecting, info *Info) error {
	if _, ok := i.cm.ExportedFunctions()["_start"]; !ok {
		info.Problems = append(info.Problems, "exports no _start function; agenthost runs WASI preview1 commands")
		return nil
	}
	var m *Manifest
	if i.bin.Custom != nil {
		var err error
		if m, err = ParseManifest(i.bin.Custom); err != nil {
			info.Problems = append(info.Problems, ManifestSection+" custom section: "+err.Error())
			return nil
		}
		info.ManifestSource = "custom section"
	} else {
		if !i.facts.Environ {
			info.Detection = errNoEnv.Error()
			return wasiCLIKind{}.inspect(ctx, i, info)
		}
		dl := detectLimits(i.limits)
		info.Detection = fmt.Sprintf("no %s section: ran describe mode (AGENTHOST_MODE=describe, nothing granted, at most %s)", ManifestSection, dl.Timeout)
		var err error
		if m, err = i.r.describe(ctx, readyModule(i.cm), "inspect", dl); err != nil {
			info.Problems = append(info.Problems, detectError(err, dl.Timeout).Error())
			return wasiCLIKind{}.inspect(ctx, i, info)
		}
		info.ManifestSource = "describe"
	}
	info.Kind = KindAgenthost
	info.Manifest = m
	for _, t := range m.Tools {
		info.Tools = append(info.Tools, loop.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return nil
}

// detectTimeout bounds the describe run that detects the kind of a plugin
// with no manifest section and no declared kind: an agenthost plugin prints
// its manifest in milliseconds, while a plain WASI command may wait for
// stdin or run on, and should not hold `validate` for the whole call
// timeout.
const detectTimeout = 3 * time.Second

// readsEnv reports whether the module can read its environment, and so
// AGENTHOST_MODE: a module without environ_get cannot be an agenthost
// plugin in describe mode, and is not run to find out.
func readsEnv(cm wazero.CompiledModule) bool {
	for _, f := range cm.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == wasi_snapshot_preview1.ModuleName && name == "environ_get" {
			return true
		}
	}
	return false
}

// detectLimits are the limits of the detecting describe run.
func detectLimits(l Limits) Limits {
	l.Timeout = min(l.Timeout, detectTimeout)
	return l
}

// errNoEnv is why a module without a manifest section that cannot read its
// environment is a plain WASI command.
var errNoEnv = errors.New("it has no " + ManifestSection + " section and cannot read AGENTHOST_MODE (it imports no environ_get), so it is not an agenthost plugin; nothing was run")

// detectError words the failure of the detecting describe run by its cause.
func detectError(err error, timeout time.Duration) error {
	var f *sandbox.Failure
	if errors.As(err, &f) && f.Kind == sandbox.FailureTimeout {
		return fmt.Errorf("cannot detect the plugin kind: it has no %s section, and its describe run (AGENTHOST_MODE=describe) did not finish within %s, the limit for detecting the kind. A plain WASI command that waits for input or keeps running needs kind = \"wasi_cli\" and tool blocks; an agenthost plugin must print its manifest and exit in describe mode (or carry the manifest in a custom section)", ManifestSection, timeout)
	}
	// The guest's stderr (a plain command's usage text or panic) is left
	// out: it answers a question nobody asked it.
	msg := err.Error()
	if i := strings.Index(msg, "; stderr:"); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("cannot detect the plugin kind: it has no %s section, and its describe run (AGENTHOST_MODE=describe) gave no manifest (%s), so it is not an agenthost plugin. A plain WASI command needs kind = \"wasi_cli\" and tool blocks", ManifestSection, firstLine(msg))
}
