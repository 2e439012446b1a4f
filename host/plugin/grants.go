package plugin

import (
	"fmt"
	"maps"
	"path"
	"sort"
)

// Grants are the capabilities a plugin actually gets.
type Grants struct {
	// Mounts are the granted directories; Mode is the stricter of the
	// request and the Spec's mount.
	Mounts []Mount
	// Env holds the granted variables with their Spec values.
	Env    map[string]string
	Clock  bool
	Random bool
	// HTTPAllow are the origins an Extism plugin may reach (Spec.HTTPAllow).
	HTTPAllow []string
	// Denied lists, in words, what the plugin asked for and did not get, or
	// what the Spec (agents.hcl) offered that the plugin did not ask for.
	// For logs and `plugin inspect`.
	Denied []string
	// Ungranted are the manifest's fs requests no mount grants, and
	// Unrequested the Spec's mounts the manifest does not request (so they
	// are not mounted). Either usually makes every call that touches files
	// fail; `validate` warns about them with the fix.
	Ungranted   []FSRequest
	Unrequested []Mount
	// UngrantedEnv, UngrantedClock and UngrantedRandom are the manifest's
	// requests for environment variables, the real clock and randomness
	// that the Spec does not grant: the plugin runs without them (a
	// fake clock, deterministic randomness), which `validate` and
	// `doctor` warn about.
	UngrantedEnv    []string
	UngrantedClock  bool
	UngrantedRandom bool
}

// grant computes the grants of a plugin. With a manifest (kind agenthost),
// a capability is granted only if the manifest requests it and the Spec
// grants it. Without one (kind wasi_cli), the Spec applies as written.
func grant(m *Manifest, p Spec) Grants {
	if m == nil {
		g := Grants{Mounts: append([]Mount(nil), p.Mounts...), Env: map[string]string{}, Clock: p.Clock, Random: p.Random}
		maps.Copy(g.Env, p.Env)
		return g
	}
	g := Grants{Env: map[string]string{}}
	hclMounts := map[string]Mount{}
	for _, mt := range p.Mounts {
		hclMounts[path.Clean(mt.Guest)] = mt
	}
	requested := map[string]bool{}
	var anyReq *FSRequest
	for i, r := range m.Requests.FS {
		if r.Guest == AnyMount {
			anyReq = &m.Requests.FS[i]
			continue
		}
		guest := path.Clean(r.Guest)
		requested[guest] = true
		mt, ok := hclMounts[guest]
		if !ok {
			g.Denied = append(g.Denied, fmt.Sprintf("fs %s (%s) requested but no mount grants it", guest, access(r.Access)))
			g.Ungranted = append(g.Ungranted, r)
			continue
		}
		if mt.ReadOnly() || access(r.Access) == MountRO {
			mt.Mode = MountRO
		}
		g.Mounts = append(g.Mounts, mt)
	}
	for _, mt := range p.Mounts {
		switch {
		case requested[path.Clean(mt.Guest)]:
		case anyReq != nil:
			if mt.ReadOnly() || access(anyReq.Access) == MountRO {
				mt.Mode = MountRO
			}
			g.Mounts = append(g.Mounts, mt)
		default:
			g.Denied = append(g.Denied, fmt.Sprintf("mount %q at %s not requested by the plugin; not mounted", mt.Name, mt.Guest))
			g.Unrequested = append(g.Unrequested, mt)
		}
	}
	if anyReq != nil && len(g.Mounts) == 0 {
		g.Denied = append(g.Denied, fmt.Sprintf("fs %s (%s, any mount) requested but the plugin block has no mount", AnyMount, access(anyReq.Access)))
		g.Ungranted = append(g.Ungranted, *anyReq)
	}
	wantEnv := map[string]bool{}
	for _, r := range m.Requests.Env {
		wantEnv[r.Key] = true
		if v, ok := p.Env[r.Key]; ok {
			g.Env[r.Key] = v
		} else {
			g.Denied = append(g.Denied, fmt.Sprintf("env %s requested but not granted", r.Key))
			g.UngrantedEnv = append(g.UngrantedEnv, r.Key)
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
		g.UngrantedClock = true
	}
	g.Random = m.Requests.Random && p.Random
	if m.Requests.Random && !p.Random {
		g.Denied = append(g.Denied, "random requested but not granted; randomness is deterministic")
		g.UngrantedRandom = true
	}
	return g
}

// access is the mode an fs request asks for: read-only unless "rw".
func access(a string) MountMode {
	if a == string(MountRW) {
		return MountRW
	}
	return MountRO
}
