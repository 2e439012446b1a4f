package plugins

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinCoreIsWasm(t *testing.T) {
	b, ok := Builtin("core")
	if !ok {
		t.Fatal(`Builtin("core") not found`)
	}
	// Magic "\0asm" and version 1 (a core module, not a WASI 0.2 component).
	if want := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}; !bytes.HasPrefix(b, want) {
		t.Fatalf("core.wasm starts with % x, want % x", b[:min(8, len(b))], want)
	}
}

func TestBuiltinUnknown(t *testing.T) {
	if b, ok := Builtin("nope"); ok || b != nil {
		t.Fatalf(`Builtin("nope") = %d bytes, %v; want nil, false`, len(b), ok)
	}
}

func TestBuiltinReturnsCopy(t *testing.T) {
	a, _ := Builtin("core")
	a[0] = 'X'
	b, _ := Builtin("core")
	if b[0] != 0 {
		t.Fatal("modifying a result of Builtin changed the embedded module")
	}
}

func TestBuiltinNames(t *testing.T) {
	if got, want := BuiltinNames(), []string{"core"}; !slices.Equal(got, want) {
		t.Fatalf("BuiltinNames() = %v, want %v", got, want)
	}
	for _, name := range BuiltinNames() {
		if _, ok := Builtin(name); !ok {
			t.Errorf("BuiltinNames lists %q but Builtin does not have it", name)
		}
	}
}

// TestCoreManifestSection checks that core.wasm carries the custom section
// agenthost.manifest and that it equals core/manifest.json, so a stale
// core.wasm (manifest edited, go generate not run) fails here too.
func TestCoreManifestSection(t *testing.T) {
	wasm, _ := Builtin("core")
	sections, err := customSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := sections["agenthost.manifest"]
	if !ok {
		t.Fatalf("core.wasm has no agenthost.manifest section; custom sections: %v", keys(sections))
	}
	src, err := os.ReadFile("core/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("section is not JSON: %v", err)
	}
	if err := json.Unmarshal(src, &b); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(a, b) {
		t.Fatal("the agenthost.manifest section of core.wasm differs from core/manifest.json; run go generate ./plugins/...")
	}
}

// customSections walks the sections of a wasm module and returns the custom
// ones by name.
func customSections(wasm []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	p := wasm[8:]
	for len(p) > 0 {
		id := p[0]
		n, k := uleb(p[1:])
		if k == 0 || uint64(len(p)-1-k) < n {
			return nil, errBadModule
		}
		body := p[1+k : 1+k+int(n)]
		p = p[1+k+int(n):]
		if id != 0 {
			continue
		}
		nl, k := uleb(body)
		if k == 0 || uint64(len(body)-k) < nl {
			return nil, errBadModule
		}
		out[string(body[k:k+int(nl)])] = body[k+int(nl):]
	}
	return out, nil
}

var errBadModule = os.ErrInvalid

func uleb(p []byte) (v uint64, n int) {
	for i, c := range p {
		if i == 10 {
			return 0, 0
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
