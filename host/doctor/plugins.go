package doctor

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// Plugin is the report on one plugin block.
type Plugin struct {
	Plugin string  `json:"plugin"`
	Checks []Check `json:"checks"`
}

// OK reports whether no check failed.
func (p Plugin) OK() bool { return allOK(p.Checks) }

// CheckPlugins reports on the plugins named (config order). h is the host
// built from cfg, or nil when host.New failed: diags then hold its
// diagnostics, and a plugin whose block one of them points at failed to
// load.
func CheckPlugins(cfg *config.Config, h *host.Host, diags hcl.Diagnostics, names []string) []Plugin {
	var out []Plugin
	var tools []host.Tool
	if h != nil {
		tools = h.Tools()
	}
	for _, cp := range cfg.Plugins {
		if !slices.Contains(names, cp.Name) {
			continue
		}
		rep := Plugin{Plugin: cp.Name}
		var errs []string
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Subject != nil && d.Subject.Filename == cp.DefRange.Filename &&
				d.Subject.Start.Line >= cp.DefRange.Start.Line && d.Subject.Start.Line <= cp.DefRange.End.Line {
				errs = append(errs, d.Summary+": "+d.Detail)
			}
		}
		switch {
		case len(errs) > 0:
			rep.Checks = append(rep.Checks, Check{Name: "loads", Status: Fail, Detail: strings.Join(errs, "; "), Hint: "run agenthost validate for the located diagnostics"})
		case h == nil:
			rep.Checks = append(rep.Checks, Check{Name: "loads", Status: Skip, Detail: "not loaded: another part of the config failed (see above)"})
		default:
			rep.Checks = append(rep.Checks, pluginLines(cp, h, tools)...)
		}
		out = append(out, rep)
	}
	return out
}

func pluginLines(cp *config.Plugin, h *host.Host, tools []host.Tool) []Check {
	var cs []Check
	for _, p := range h.Plugins {
		if p.Name() != cp.Name {
			continue
		}
		cs = append(cs, Check{Name: "loads", Status: OK, Detail: cp.Source})
		cs = append(cs, Check{Name: "kind", Status: OK, Detail: string(p.Kind())})
		var names []string
		for _, t := range tools {
			if t.Plugin == cp.Name {
				n := t.Name
				if t.PluginTool != "" {
					n += " (" + t.PluginTool + ")"
				}
				names = append(names, n)
			}
		}
		cs = append(cs, Check{Name: "tools", Status: OK, Detail: strings.Join(names, ", ")})
		g := p.Grants()
		var grants []string
		for _, m := range g.Mounts {
			grants = append(grants, fmt.Sprintf("%s %s", m.Guest, m.Mode))
		}
		keys := make([]string, 0, len(g.Env))
		for k := range g.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			grants = append(grants, "env "+strings.Join(keys, ","))
		}
		if g.Clock {
			grants = append(grants, "clock")
		}
		if g.Random {
			grants = append(grants, "random")
		}
		for _, a := range g.HTTPAllow {
			grants = append(grants, "http "+a)
		}
		if len(grants) == 0 {
			grants = []string{"none"}
		}
		gc := Check{Name: "grants", Status: OK, Detail: strings.Join(grants, ", ")}
		if len(g.Ungranted) > 0 {
			var want []string
			for _, r := range g.Ungranted {
				want = append(want, r.Guest)
			}
			gc.Status, gc.Hint = Fail, "add a mount block granting "+strings.Join(want, ", ")+" (agenthost validate shows it)"
			gc.Detail += "; requested but not granted: " + strings.Join(want, ", ")
		}
		cs = append(cs, gc)
		for _, m := range cp.Mounts {
			c := Check{Name: "mount " + m.Name, Status: OK, Detail: fmt.Sprintf("%s → %s (%s)", m.Host, m.Guest, m.Mode)}
			if fi, err := os.Stat(m.Host); err != nil || !fi.IsDir() {
				c.Status, c.Hint = Fail, "create the directory or fix the mount's host"
				c.Detail += ": not a directory"
			}
			cs = append(cs, c)
		}
	}
	return cs
}
