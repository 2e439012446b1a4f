package component

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShape: components outside the supported shape are refused at load
// with a message saying what is unsupported.
func TestShape(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, "")
	cases := []struct{ file, msg string }{
		{"shape_async.wasm", `export "f" is an async function: only synchronous exports are supported`},
		{"shape_resource.wasm", "exported resources are not supported"},
		{"shape_nested.wasm", "a nested component contains a core module"},
		{"shape_nested_import.wasm", `a nested component imports an instance ("x")`},
	}
	for _, c := range cases {
		_, err := Load(ctx, rt, readTestdata(t, c.file), Options{})
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want ErrShape saying %q", c.file, err, c.msg)
		}
	}
	core := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	if _, err := Load(ctx, rt, core, Options{}); err == nil || !strings.Contains(err.Error(), "core module, not a component") {
		t.Errorf("core module: %v", err)
	}
	if _, err := Load(ctx, rt, []byte("hello"), Options{}); err == nil || !strings.Contains(err.Error(), "not a WebAssembly binary") {
		t.Errorf("text: %v", err)
	}
}

// TestCorrupt: every prefix of a valid component, and the component with
// each byte changed, loads or fails with an error; none panics, and what
// loads can be called without a panic.
func TestCorrupt(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, "")
	b := readTestdata(t, "wasi.wasm")
	try := func(what string, bin []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: panic: %v", what, r)
			}
		}()
		k, err := Load(ctx, rt, bin, Options{})
		if err != nil {
			return
		}
		defer k.Close(ctx)
		for _, f := range k.Funcs() {
			if f.Name != "spin" && f.Name != "bomb" && f.Name != "flood" {
				callTool(t, k, f.Name, `{}`, nil)
			}
		}
	}
	for n := 0; n < len(b); n++ {
		try(fmt.Sprintf("prefix of %d bytes", n), b[:n])
	}
	for i := 8; i < len(b); i += 17 {
		c := append([]byte(nil), b...)
		c[i] ^= 0x5a
		try(fmt.Sprintf("byte %d changed", i), c)
	}
}

// TestVersions: WASI imports are provided for any 0.2.x version only.
func TestVersions(t *testing.T) {
	k := loadTestdata(t, "shape_versions.wasm", Options{})
	got := map[string]bool{}
	for _, im := range k.Imports() {
		got[im.Name] = im.Provided
	}
	want := map[string]bool{"wasi:cli/environment@0.3.0": false, "wasi:cli/environment@0.2.0": true, "local:app/thing@1.0.0": false}
	for n, w := range want {
		if p, ok := got[n]; !ok || p != w {
			t.Errorf("import %s: provided %v (listed %v), want %v", n, p, ok, w)
		}
	}
}

// TestTestdataUpToDate checks that each testdata/*.wasm is its .wat in
// binary form (jco parse); with AGENTHOST_UPDATE set it rewrites them.
func TestTestdataUpToDate(t *testing.T) {
	wats, _ := filepath.Glob(filepath.Join("testdata", "*.wat"))
	if len(wats) == 0 {
		t.Fatal("no testdata/*.wat")
	}
	srcs := make([]string, len(wats))
	for i, w := range wats {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = string(b)
	}
	bins := watToWasm(t, srcs...)
	for i, w := range wats {
		got := bins[i]
		bin := strings.TrimSuffix(w, ".wat") + ".wasm"
		if os.Getenv("AGENTHOST_UPDATE") != "" {
			if err := os.WriteFile(bin, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(bin)
		if err != nil || !bytes.Equal(have, got) {
			t.Errorf("%s is not %s in binary form: run AGENTHOST_UPDATE=1 go test ./host/component -run TestTestdataUpToDate", bin, w)
		}
	}
}
