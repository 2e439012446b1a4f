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

// unixCalls: where SetAppend changes O_APPEND in place, pwrite works on a
// file opened with O_APPEND and rename replaces an empty directory (the
// build tags of sys_unix.go).
var unixCalls = map[string]bool{"darwin": true, "dragonfly": true, "freebsd": true, "linux": true, "netbsd": true, "openbsd": true}[runtime.GOOS]

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
		if !unixCalls {
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
		if !unixCalls {
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

// TestRenameOverDirectory renames a directory over an empty one, which
// rename(2) allows (os.Root does not), and checks the errors of the cases
// it refuses.
func TestRenameOverDirectory(t *testing.T) {
	eachMount(t, func(t *testing.T, f *FS, dir string) {
		for _, d := range []string{"src", "dst", "full", "other"} {
			must(t, os.Mkdir(filepath.Join(dir, d), 0o755))
		}
		must(t, os.WriteFile(filepath.Join(dir, "src", "kept"), nil, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "full", "f"), nil, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
		e := f.Rename("src", "dst")
		if !unixCalls {
			if e != experimentalsys.EEXIST {
				t.Fatalf("rename over an empty directory: %v, want EEXIST on %s", e, runtime.GOOS)
			}
			return
		}
		if e != 0 {
			t.Fatalf("rename over an empty directory: %v", e)
		}
		if _, err := os.Stat(filepath.Join(dir, "dst", "kept")); err != nil {
			t.Errorf("the directory did not move: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "src")); !os.IsNotExist(err) {
			t.Errorf("src still there: %v", err)
		}
		if e := f.Rename("dst/", "other/"); e != 0 {
			t.Errorf("rename with trailing slashes: %v", e)
		}
		for _, c := range []struct {
			from, to string
			want     []experimentalsys.Errno
		}{
			{"other", "full", []experimentalsys.Errno{experimentalsys.ENOTEMPTY, experimentalsys.EEXIST}},
			{"file", "full", []experimentalsys.Errno{experimentalsys.EISDIR}},
			{"other", "full/f", []experimentalsys.Errno{experimentalsys.ENOTDIR}},
			{"file/", "full", []experimentalsys.Errno{experimentalsys.ENOTDIR}},
			{"other", "other/sub", []experimentalsys.Errno{experimentalsys.EINVAL}},
		} {
			e := f.Rename(c.from, c.to)
			ok := false
			for _, w := range c.want {
				ok = ok || e == w
			}
			if !ok {
				t.Errorf("rename %s to %s: %v, want %v", c.from, c.to, e, c.want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "full", "f")); err != nil {
			t.Errorf("a refused rename changed full/: %v", err)
		}
	})
}

// TestRenameOverPinnedDirectory: a guarded mount still refuses to replace a
// directory that holds a protected entry, even an empty-looking one.
func TestRenameOverPinnedDirectory(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	must(t, os.Mkdir(filepath.Join(pr.ws, "empty"), 0o755))
	for _, to := range []string{"conf/inner", "conf", ".agenthost"} {
		if e := f.Rename("empty", to); e != experimentalsys.EACCES {
			t.Errorf("rename empty to %s: %v, want EACCES", to, e)
		}
	}
	pr.unchanged(t)
}

// TestUnlinkTrailingSlash: "file/" names a directory, so unlinking or
// removing it fails with ENOTDIR and leaves the file.
func TestUnlinkTrailingSlash(t *testing.T) {
	eachMount(t, func(t *testing.T, f *FS, dir string) {
		must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
		must(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
		must(t, os.Symlink("file", filepath.Join(dir, "link")))
		for _, c := range []struct {
			p    string
			dir  bool
			want experimentalsys.Errno
		}{
			{"file/", false, experimentalsys.ENOTDIR},
			{"link/", false, experimentalsys.ENOTDIR},
			{"file/", true, experimentalsys.ENOTDIR},
			{"dir/", false, experimentalsys.EISDIR},
			{"dir", false, experimentalsys.EISDIR},
		} {
			rm, op := f.Unlink, "unlink"
			if c.dir {
				rm, op = f.Rmdir, "rmdir"
			}
			if e := rm(c.p); e != c.want {
				t.Errorf("%s %s: %v, want %v", op, c.p, e, c.want)
			}
		}
		for _, p := range []string{"file", "link"} {
			if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
				t.Errorf("%s is gone: %v", p, err)
			}
		}
		if e := f.Unlink("file"); e != 0 {
			t.Errorf("unlink file: %v", e)
		}
		if e := f.Rmdir("dir/"); e != 0 {
			t.Errorf("rmdir dir/: %v", e)
		}
	})
}

// TestNewLinkTrailingSlash: a symbolic or hard link cannot be made at a
// name with a trailing slash, which names a directory.
func TestNewLinkTrailingSlash(t *testing.T) {
	eachMount(t, func(t *testing.T, f *FS, dir string) {
		must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
		must(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
		for _, c := range []struct {
			op, name string
			want     []experimentalsys.Errno
		}{
			{"symlink", "new/", []experimentalsys.Errno{experimentalsys.ENOENT}},
			{"symlink", "dir/", []experimentalsys.Errno{experimentalsys.EEXIST}},
			{"symlink", "file/", []experimentalsys.Errno{experimentalsys.ENOTDIR, experimentalsys.EEXIST}},
			{"symlink", "dir", []experimentalsys.Errno{experimentalsys.EEXIST}},
			{"link", "new/", []experimentalsys.Errno{experimentalsys.ENOENT}},
		} {
			var e experimentalsys.Errno
			if c.op == "symlink" {
				e = f.Symlink("file", c.name)
			} else {
				e = f.Link("file", c.name)
			}
			ok := false
			for _, w := range c.want {
				ok = ok || e == w
			}
			if !ok {
				t.Errorf("%s at %s: %v, want %v", c.op, c.name, e, c.want)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
			t.Errorf("new was made: %v", err)
		}
		if e := f.Symlink("file", "new"); e != 0 {
			t.Errorf("symlink at new: %v", e)
		}
	})
}
