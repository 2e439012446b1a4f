package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/wasmbuild"
)

// cacheDir is a compilation cache shared by the tests' runtimes, so each
// module is compiled once per test binary.
var cacheDir string

// guests holds the test plugins built from testdata/<name>, by name.
var guests = map[string][]byte{}

// TestMain builds the test plugins once per test binary.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "agenthost-plugin-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cacheDir = filepath.Join(dir, "cache")
		names := []string{"echo", "hostile", "cli", "reuse"}
		var dirs []string
		for _, n := range names {
			dirs = append(dirs, filepath.Join("testdata", n))
		}
		if err := wasmbuild.Build(dir, dirs...); err != nil {
			fmt.Fprintf(os.Stderr, "building test plugins: %v\n", err)
			return 1
		}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			guests[n] = b
		}
		return m.Run()
	}())
}

// newRuntime makes a runtime closed at the end of the test.
func newRuntime(t testing.TB) *Runtime {
	t.Helper()
	r, err := NewRuntime(context.Background(), cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("close runtime: %v", err)
		}
	})
	return r
}

// writeGuest writes a module into a temp file and returns its path.
func writeGuest(t testing.TB, wasm []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(p, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// spec is a Spec for a module in a file, with small test limits. The
// memory limit is the default (so Inspect reuses the compiled module), but
// 64 MiB for the hostile guest, whose memory bomb then ends quickly. The
// limit is part of the compiled bytes, so each distinct pair compiles once.
func spec(t testing.TB, name string, wasm []byte) Spec {
	mem := uint64(defaults.Memory)
	if bytes.Equal(wasm, guests["hostile"]) {
		mem = 64 << 20
	}
	return Spec{
		Name: name,
		Path: writeGuest(t, wasm),
		Limits: Limits{
			Memory:    mem,
			Timeout:   5 * time.Second,
			MaxOutput: 64 << 10,
		},
	}
}

func load(t testing.TB, r *Runtime, s Spec) *Plugin {
	t.Helper()
	p, err := r.Load(context.Background(), s)
	if err != nil {
		t.Fatalf("load %s: %v", s.Name, err)
	}
	return p
}

// stringArgs decodes the arguments of a wasi_cli test tool: an object of
// strings and numbers, rendered as strings.
func stringArgs(raw json.RawMessage) (map[string]string, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out, nil
}

// mountTree is a directory tree for mount tests: root/secret.txt outside the
// mount, root/ws the mount with inside.txt, and host symlinks planted in it
// that point at the secret.
type mountTree struct {
	root, ws, secret, secretPath string
}

func newSandbox(t testing.TB) mountTree {
	t.Helper()
	root := t.TempDir()
	s := mountTree{root: root, ws: filepath.Join(root, "ws"), secret: fmt.Sprintf("TOPSECRET-%d", time.Now().UnixNano()), secretPath: filepath.Join(root, "secret.txt")}
	must(t, os.WriteFile(s.secretPath, []byte(s.secret), 0o600))
	must(t, os.MkdirAll(filepath.Join(s.ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(s.ws, "inside.txt"), []byte("inside content"), 0o644))
	must(t, os.Symlink(s.secretPath, filepath.Join(s.ws, "abs_link")))
	must(t, os.Symlink("../secret.txt", filepath.Join(s.ws, "rel_link")))
	must(t, os.Symlink("..", filepath.Join(s.ws, "dir_link")))
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
