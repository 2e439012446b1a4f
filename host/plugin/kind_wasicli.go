package plugin

import (
	"context"
	"errors"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
)

// The wasi_cli kind: any WASI preview1 command, its tools described by the
// Spec's CLITools (the tool blocks of agents.hcl), each call one run of
// the command with the argv and stdin the tool builds (callCLI). It has
// no manifest, so its Spec's grants apply as written; it takes its argv
// at start, so its instances are never pre-started.
type wasiCLIKind struct{}

func (wasiCLIKind) name() Kind      { return KindWASICLI }
func (wasiCLIKind) component() bool { return false }
func (wasiCLIKind) prestart() bool  { return false }

// detect claims a module with tool blocks and no manifest section.
func (wasiCLIKind) detect(f *loadcache.Facts, spec *Spec) bool {
	return !f.Extism && f.Section == "" && len(spec.Tools) > 0
}

func (wasiCLIKind) load(ctx context.Context, l *loading) error {
	if err := l.command(); err != nil {
		return err
	}
	p, spec := l.p, l.spec
	if len(spec.Tools) == 0 {
		return errors.New("a wasi_cli plugin needs at least one tool block describing its tool")
	}
	p.grants = grant(nil, spec)
	base, err := p.baseConfig()
	if err != nil {
		return err
	}
	for _, ct := range spec.Tools {
		if err := p.addTool(ct.Name, ct.Description, ct.InputSchema, &ct, base); err != nil {
			return err
		}
	}
	return nil
}

// inspect has nothing to add: a plain WASI command describes nothing (its
// tools would be tool blocks).
func (wasiCLIKind) inspect(_ context.Context, _ *inspecting, info *Info) error {
	info.Kind = KindWASICLI
	return nil
}
