package host

import (
	"fmt"
	"path"
	"strings"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/hashicorp/hcl/v2"
)

// grantWarnings turns the mismatches between a plugin's manifest and its
// mount blocks into warnings: an fs request no mount grants, and a mount the
// plugin does not request (it is not mounted). Both load fine and then fail
// on every call that touches files, so `validate` shows them with the fix.
func grantWarnings(cp *config.Plugin, g plugin.Grants) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var requested []string
	for _, r := range g.Ungranted {
		if r.Guest != plugin.AnyMount {
			requested = append(requested, path.Clean(r.Guest))
		}
	}
	for _, r := range g.Ungranted {
		guest := path.Clean(r.Guest)
		mode := "ro"
		if r.Access == string(plugin.MountRW) {
			mode = "rw"
		}
		why := ""
		if r.Reason != "" {
			why = ": " + r.Reason
		}
		if cp.Bare {
			asks, at := fmt.Sprintf("asks for the directory %s", guest), guest
			if r.Guest == plugin.AnyMount {
				asks, at = "works on the directories it is granted", "/workspace"
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Plugin request not granted",
				Detail: fmt.Sprintf("the module %s (%s%s), but no --mount grants it, so its calls that need files fail. Grant it with --mount HOST:GUEST[:ro|rw], like: --mount .:%s:%s",
					asks, mode, why, at, mode),
				Subject: cp.DefRange.Ptr(),
			})
			continue
		}
		if r.Guest == plugin.AnyMount {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Plugin request not granted",
				Detail: fmt.Sprintf("plugin %q works on the directories its mount blocks grant (%s%s), but it has none, so its calls that need files fail. Add one:\n  mount \"workspace\" {\n    host  = \".\"\n    guest = \"/workspace\"\n    mode  = %q\n  }",
					cp.Name, mode, why, mode),
				Subject: cp.DefRange.Ptr(),
			})
			continue
		}
		fix := fmt.Sprintf("add a mount block to plugin %q:\n  mount %q {\n    host  = \".\"\n    guest = %q\n    mode  = %q\n  }", cp.Name, mountName(guest), guest, mode)
		if len(g.Unrequested) > 0 {
			fix = fmt.Sprintf("set guest = %q in mount %q (now at %s), or ", guest, g.Unrequested[0].Name, g.Unrequested[0].Guest) + fix
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Plugin request not granted",
			Detail: fmt.Sprintf("plugin %q asks for the directory %s (%s%s), but no mount of the plugin block is at %s, so its calls that need those files fail. To grant it, %s",
				cp.Name, guest, mode, why, guest, fix),
			Subject: cp.DefRange.Ptr(),
		})
	}
	var asked, fix []string
	if g.UngrantedClock {
		asked = append(asked, "the real clock (without it, it sees a fixed clock in the past)")
		fix = append(fix, "  clock = true")
	}
	if g.UngrantedRandom {
		asked = append(asked, "randomness (without it, its random numbers are the same on every run)")
		fix = append(fix, "  random = true")
	}
	if len(g.UngrantedEnv) > 0 {
		asked = append(asked, "the environment variables "+strings.Join(g.UngrantedEnv, ", ")+" (without them, they are unset)")
		var kv []string
		for _, k := range g.UngrantedEnv {
			kv = append(kv, fmt.Sprintf("    %s = env(%q)", k, k))
		}
		fix = append(fix, "  env = {\n"+strings.Join(kv, "\n")+"\n  }")
	}
	if len(asked) > 0 && cp.Bare {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Plugin request not granted",
			Detail: fmt.Sprintf("the module asks for %s, which a module called by file is not granted. If it should have it, call it through a plugin block of agents.hcl that grants it (agenthost plugin call NAME), with:\n%s",
				strings.Join(asked, "; "), strings.Join(fix, "\n")),
			Subject: cp.DefRange.Ptr(),
		})
	} else if len(asked) > 0 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Plugin request not granted",
			Detail: fmt.Sprintf("plugin %q asks for %s, but its block does not grant it. If the plugin should have it, add to plugin %q:\n%s",
				cp.Name, strings.Join(asked, "; "), cp.Name, strings.Join(fix, "\n")),
			Subject: cp.DefRange.Ptr(),
		})
	}
	for _, m := range g.Unrequested {
		subject := cp.DefRange.Ptr()
		for _, cm := range cp.Mounts {
			if cm.Name == m.Name {
				subject = cm.DefRange.Ptr()
			}
		}
		asks := "asks for no other directory; remove the mount"
		if len(requested) > 0 {
			asks = fmt.Sprintf("asks for %s; set guest = %q, or remove the mount", strings.Join(requested, ", "), requested[0])
		}
		if cp.Bare {
			asks = "asks for no other directory; leave that --mount out"
			if len(requested) > 0 {
				asks = fmt.Sprintf("asks for %s; give --mount HOST:%s instead", strings.Join(requested, ", "), requested[0])
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Mount not requested",
				Detail:   fmt.Sprintf("--mount at %s is not mounted: the module does not request %s. The module %s.", m.Guest, m.Guest, asks),
				Subject:  subject,
			})
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Mount not requested",
			Detail:   fmt.Sprintf("mount %q at %s is not mounted: plugin %q does not request %s. The plugin %s.", m.Name, m.Guest, cp.Name, m.Guest, asks),
			Subject:  subject,
		})
	}
	return diags
}

// mountName suggests a mount block label for a guest path.
func mountName(guest string) string {
	if b := path.Base(guest); b != "/" && b != "." {
		return b
	}
	return "files"
}
