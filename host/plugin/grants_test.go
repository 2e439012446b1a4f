package plugin

import (
	"reflect"
	"testing"
)

// TestGrantAnyMount checks the "*" fs request: every mount of the Spec is
// granted at its own guest path, in order, at the stricter mode; with no
// mount at all the request is reported as ungranted.
func TestGrantAnyMount(t *testing.T) {
	m := &Manifest{Requests: Requests{FS: []FSRequest{{Guest: AnyMount, Access: "rw"}}}}
	mounts := []Mount{
		{Name: "files", Host: "/h/files", Guest: "/files", Mode: MountRW},
		{Name: "docs", Host: "/h/docs", Guest: "/srv/docs", Mode: MountRO},
	}
	g := grant(m, Spec{Mounts: mounts})
	if !reflect.DeepEqual(g.Mounts, mounts) {
		t.Errorf("mounts = %+v, want %+v", g.Mounts, mounts)
	}
	if len(g.Ungranted)+len(g.Unrequested)+len(g.Denied) != 0 {
		t.Errorf("mismatches reported for a * request: %+v %+v %q", g.Ungranted, g.Unrequested, g.Denied)
	}

	ro := &Manifest{Requests: Requests{FS: []FSRequest{{Guest: AnyMount}}}}
	if g := grant(ro, Spec{Mounts: mounts[:1]}); len(g.Mounts) != 1 || g.Mounts[0].Mode != MountRO {
		t.Errorf("an ro * request on an rw mount: %+v, want it read-only", g.Mounts)
	}

	g = grant(m, Spec{})
	if len(g.Ungranted) != 1 || g.Ungranted[0].Guest != AnyMount || len(g.Mounts) != 0 {
		t.Errorf("no mounts: ungranted %+v, mounts %+v; want the * request ungranted", g.Ungranted, g.Mounts)
	}

	// An explicit request and a mismatched mount are both reported.
	exp := &Manifest{Requests: Requests{FS: []FSRequest{{Guest: "/data", Access: "rw"}}}}
	g = grant(exp, Spec{Mounts: mounts[:1]})
	if len(g.Ungranted) != 1 || g.Ungranted[0].Guest != "/data" || len(g.Unrequested) != 1 || g.Unrequested[0].Name != "files" {
		t.Errorf("mismatch: ungranted %+v, unrequested %+v", g.Ungranted, g.Unrequested)
	}
	tools := `"tools": [{"name": "t", "description": "d"}]`
	if _, err := ParseManifest([]byte(`{"protocol": "agenthost/1", ` + tools + `, "requests": {"fs": [{"guest": "*", "access": "rw"}]}}`)); err != nil {
		t.Errorf("a * request was refused: %v", err)
	}
	if _, err := ParseManifest([]byte(`{"protocol": "agenthost/1", ` + tools + `, "requests": {"fs": [{"guest": "rel"}]}}`)); err == nil {
		t.Error("a relative guest path other than * was accepted")
	}
}
