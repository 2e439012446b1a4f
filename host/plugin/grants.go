package plugin

import (
	"fmt"
	"path"
	"sort"

	"github.com/agenthost/agenthost/host/config"
)

// Grants are the capabilities a plugin actually gets.
type Grants struct {
	// Mounts are the granted directories; Mode is the stricter of the
	// request and the HCL mount.
	Mounts []config.Mount
	// Env holds the granted variables with their HCL values.
	Env    map[string]string
	Clock  bool
	Random bool
	// Denied lists, in words, what the plugin asked for and did not get, or
	// what agents.hcl offered that the plugin did not ask for. For logs and
	// `plugin inspect`.
	Denied []string
}

// grant computes the grants of a plugin. With a manifest (kind agenthost),
// a capability is granted only if the manifest requests it and the plugin
// block grants it. Without one (kind wasi_cli), the plugin block applies as
// written.
func grant(m *Manifest, p *config.Plugin) Grants {
	if m == nil {
		g := Grants{Mounts: append([]config.Mount(nil), p.Mounts...), Env: map[string]string{}, Clock: p.Clock, Random: p.Random}
		for k, v := range p.Env {
			g.Env[k] = v
		}
		return g
	}
	g := Grants{Env: map[string]string{}}
	hclMounts := map[string]config.Mount{}
	for _, mt := range p.Mounts {
		hclMounts[path.Clean(mt.Guest)] = mt
	}
	requested := map[string]bool{}
	for _, r := range m.Requests.FS {
		guest := path.Clean(r.Guest)
		requested[guest] = true
		mt, ok := hclMounts[guest]
		if !ok {
			g.Denied = append(g.Denied, fmt.Sprintf("fs %s (%s) requested but no mount grants it", guest, access(r.Access)))
			continue
		}
		if mt.Mode == "rw" && access(r.Access) == "ro" {
			mt.Mode = "ro"
		}
		if mt.Mode != "rw" {
			mt.Mode = "ro"
		}
		g.Mounts = append(g.Mounts, mt)
	}
	for _, mt := range p.Mounts {
		if !requested[path.Clean(mt.Guest)] {
			g.Denied = append(g.Denied, fmt.Sprintf("mount %q at %s not requested by the plugin; not mounted", mt.Name, mt.Guest))
		}
	}
	wantEnv := map[string]bool{}
	for _, r := range m.Requests.Env {
		wantEnv[r.Key] = true
		if v, ok := p.Env[r.Key]; ok {
			g.Env[r.Key] = v
		} else {
			g.Denied = append(g.Denied, fmt.Sprintf("env %s requested but not granted", r.Key))
		}
	}
	var keys []string
	for k := range p.Env {
		if !wantEnv[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g.Denied = append(g.Denied, fmt.Sprintf("env %s granted but not requested; not set", k))
	}
	g.Clock = m.Requests.Clock && p.Clock
	if m.Requests.Clock && !p.Clock {
		g.Denied = append(g.Denied, "clock requested but not granted; the clock is fake")
	}
	g.Random = m.Requests.Random && p.Random
	if m.Requests.Random && !p.Random {
		g.Denied = append(g.Denied, "random requested but not granted; randomness is deterministic")
	}
	return g
}

func access(a string) string {
	if a == "rw" {
		return "rw"
	}
	return "ro"
}
