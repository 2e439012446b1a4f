package host

import (
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/pluginkind"
)

// pluginSpec is the sandbox's view of a plugin block: the module, its kind,
// limits and grants, and for a wasi_cli plugin its tools, whose command
// line is the tool block's argv and stdin evaluated per call.
//
// The enumerations of agents.hcl (kind, mode, doom_loop.action,
// final_step_tools) are typed in config and again in the package that acts
// on them, with the same spellings (the kinds are internal/pluginkind's
// rows in both; the others TestEnumSpellings checks); the host converts one
// to the other.
func pluginSpec(p *config.Plugin) plugin.Spec {
	s := plugin.Spec{
		Name:     p.Name,
		Builtin:  p.Builtin,
		OCI:      p.OCI,
		Insecure: p.Insecure,
		Path:     p.Path,
		SHA256:   p.SHA256,
		Kind:     plugin.Kind(p.Kind),
		Limits: plugin.Limits{
			Memory:    p.Limits.Memory,
			Timeout:   p.Limits.Timeout,
			MaxOutput: p.Limits.MaxOutput,
			MaxWrite:  p.Limits.MaxWrite,
			MaxFiles:  p.Limits.MaxFiles,
		},
		Env:       p.Env,
		Clock:     p.Clock,
		Random:    p.Random,
		Config:    p.Config,
		HTTPAllow: p.HTTPAllow,
		Reuse:     p.Reuse,
	}
	for _, m := range p.Mounts {
		s.Mounts = append(s.Mounts, plugin.Mount{Name: m.Name, Host: m.Host, Guest: m.Guest, Mode: plugin.MountMode(m.Mode)})
	}
	for _, t := range p.Tools {
		ct := plugin.CLITool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Command: t.Eval}
		if p.Kind == pluginkind.Extism {
			ct.Function, ct.Command = t.Function, t.EvalInput
		}
		s.Tools = append(s.Tools, ct)
	}
	return s
}
