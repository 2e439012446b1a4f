package component

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/internal/rootfs"
)

// TestRust calls a component built from Rust (rustc for WASI preview 1,
// adapted to 0.2 with wit-component's adapter, as cargo-component does):
// its standard library's println and std::fs go through the adapter to
// wasi:cli and wasi:filesystem.
func TestRust(t *testing.T) {
	b := rustComponent(t)
	ctx := context.Background()
	k, err := Load(ctx, newRuntime(t, ""), b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	top := t.TempDir()
	dir := filepath.Join(top, "data")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello from a file\n"), 0o644)
	os.WriteFile(filepath.Join(top, "secret.txt"), []byte("secret\n"), 0o644)
	fs, err := rootfs.New(dir, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	sb := &Sandbox{Mounts: []Mount{{GuestPath: "/data", FS: fs, ReadOnly: true}}}

	out := mustCall(t, k, "greet", `{"name":"you"}`, sb)
	if string(out.JSON) != `{"result":"hello you from Rust"}` || string(out.Stdout) != "greeting you\n" {
		t.Errorf("greet = %s, stdout %q", out.JSON, out.Stdout)
	}
	out = mustCall(t, k, "read-file", `{"path":"/data/a.txt"}`, sb)
	if string(out.JSON) != `{"result":{"ok":"hello from a file\n"}}` || out.IsError {
		t.Errorf("read-file = %s", out.JSON)
	}
	for _, p := range []string{"/data/../secret.txt", "/data/../../etc/passwd", "/etc/passwd"} {
		out = mustCall(t, k, "read-file", `{"path":"`+p+`"}`, sb)
		if !out.IsError {
			t.Errorf("read-file(%s) = %s", p, out.JSON)
		}
	}
}
