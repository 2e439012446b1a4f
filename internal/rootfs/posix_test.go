package rootfs

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// The POSIX behaviours the WASI test suite checks (see
// host/plugin/wasi_conformance_test.go), one test each, on a plain mount
// and on a guarded one (a protected file inside, so every path is resolved
// component by component).

func eachMount(t *testing.T, test func(t *testing.T, f *FS, dir string)) {
	t.Run("direct", func(t *testing.T) {
		dir := t.TempDir()
		test(t, newFS(t, dir, false), dir)
	})
	t.Run("guarded", func(t *testing.T) {
		dir := t.TempDir()
		secret := filepath.Join(dir, "protected")
		must(t, os.WriteFile(secret, []byte("secret"), 0o600))
		f, err := New(dir, false, []Protected{{Path: secret, What: "a protected file"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if !f.Guarded() {
			t.Fatal("the mount is not guarded")
		}
		test(t, f, dir)
		if b, err := os.ReadFile(secret); err != nil || string(b) != "secret" {
			t.Errorf("the protected file changed: %q, %v", b, err)
		}
	})
}

// appendSupported: where SetAppend changes O_APPEND in place and pwrite
// works on a file opened with O_APPEND (the build tags of sys_unix.go).
var appendSupported = map[string]bool{"darwin": true, "dragonfly": true, "freebsd": true, "linux": true, "netbsd": true, "openbsd": true}[runtime.GOOS]

func content(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, f experimentalsys.File, s string) {
	t.Helper()
	if n, e := f.Write([]byte(s)); e != 0 || n != len(s) {
		t.Fatalf("write %q: %d, %v", s, n, e)
	}
}

func seek(t *testing.T, f experimentalsys.File, off int64, whence int) int64 {
	t.Helper()
	n, e := f.Seek(off, whence)
	if e != 0 {
		t.Fatalf("seek: %v", e)
	}
	return n
}

// TestSetAppend turns O_APPEND off and on on an open file (fd_fdstat_set_flags).
func TestSetAppend(t *testing.T) {
	eachMount(t, func(t *testing.T, f *FS, dir string) {
		of, e := f.OpenFile("log", experimentalsys.O_CREAT|experimentalsys.O_RDWR|experimentalsys.O_APPEND, 0o644)
		if e != 0 {
			t.Fatal(e)
		}
		defer of.Close()
		write(t, of, "aa")
		seek(t, of, 0, io.SeekStart)
		write(t, of, "bb")
		if got := content(t, filepath.Join(dir, "log")); got != "aabb" {
			t.Fatalf("with O_APPEND: %q, want aabb", got)
		}
		e = of.SetAppend(false)
		if !appendSupported {
			if e != experimentalsys.ENOSYS {
				t.Fatalf("SetAppend: %v, want ENOSYS on %s", e, runtime.GOOS)
			}
			return
		}
		if e != 0 || of.IsAppend() {
			t.Fatalf("SetAppend(false): %v, IsAppend %v", e, of.IsAppend())
		}
		seek(t, of, 0, io.SeekStart)
		write(t, of, "cc")
		if got := content(t, filepath.Join(dir, "log")); got != "ccbb" {
			t.Fatalf("without O_APPEND: %q, want ccbb", got)
		}
		if e := of.SetAppend(true); e != 0 || !of.IsAppend() {
			t.Fatalf("SetAppend(true): %v, IsAppend %v", e, of.IsAppend())
		}
		seek(t, of, 0, io.SeekStart)
		write(t, of, "dd")
		if got := content(t, filepath.Join(dir, "log")); got != "ccbbdd" {
			t.Fatalf("with O_APPEND again: %q, want ccbbdd", got)
		}
		if e := of.Close(); e != 0 {
			t.Fatal(e)
		}
		if e := of.SetAppend(false); e != experimentalsys.EBADF {
			t.Errorf("SetAppend after Close: %v, want EBADF", e)
		}
	})
}

// TestPwriteAppend writes at an offset to a file opened with O_APPEND:
// POSIX writes at the offset, Linux at the end; the file offset stays.
func TestPwriteAppend(t *testing.T) {
	eachMount(t, func(t *testing.T, f *FS, dir string) {
		of, e := f.OpenFile("log", experimentalsys.O_CREAT|experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0o644)
		if e != 0 {
			t.Fatal(e)
		}
		defer of.Close()
		write(t, of, "abcd")
		n, e := of.Pwrite([]byte("xyz"), 0)
		if !appendSupported {
			return // os.File refuses, as before
		}
		if e != 0 || n != 3 {
			t.Fatalf("pwrite: %d, %v", n, e)
		}
		if off := seek(t, of, 0, io.SeekCurrent); off != 4 {
			t.Errorf("offset after pwrite: %d, want 4", off)
		}
		if got := content(t, filepath.Join(dir, "log")); got != "abcdxyz" && got != "xyzd" {
			t.Errorf("content %q, want abcdxyz (Linux) or xyzd", got)
		}
	})
}
