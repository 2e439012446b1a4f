package rootfs

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// tree makes root/secret.txt outside the mount and root/ws as the mount,
// with a file, a subdirectory and host symlinks pointing out.
func tree(t *testing.T) (ws, secretPath string) {
	t.Helper()
	root := t.TempDir()
	ws = filepath.Join(root, "ws")
	secretPath = filepath.Join(root, "secret.txt")
	for _, err := range []error{
		os.WriteFile(secretPath, []byte("SECRET"), 0o600),
		os.MkdirAll(filepath.Join(ws, "sub"), 0o755),
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644),
		os.Symlink(secretPath, filepath.Join(ws, "abs_link")),
		os.Symlink("../secret.txt", filepath.Join(ws, "rel_link")),
		os.Symlink("../..", filepath.Join(ws, "sub", "up")),
		os.Symlink("a.txt", filepath.Join(ws, "ok_link")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return ws, secretPath
}

func newFS(t *testing.T, dir string, ro bool) *FS {
	t.Helper()
	fs, err := New(dir, ro, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

func readAll(t *testing.T, f experimentalsys.File) string {
	t.Helper()
	var out []byte
	buf := make([]byte, 64)
	for {
		n, e := f.Read(buf)
		if e != 0 {
			t.Fatalf("read: %v", e)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func TestEscapesRefused(t *testing.T) {
	ws, _ := tree(t)
	fs := newFS(t, ws, false)
	for _, p := range []string{"../secret.txt", "sub/../../secret.txt", "/../secret.txt", "abs_link", "rel_link", "sub/up/secret.txt"} {
		f, e := fs.OpenFile(p, experimentalsys.O_RDONLY, 0)
		if e == 0 {
			got := readAll(t, f)
			f.Close()
			if got == "SECRET" {
				t.Fatalf("%s: read the secret outside the mount", p)
			}
			// "../x" is anchored at the mount: it names ws/x, which does not
			// exist, so a successful open is itself a bug.
			t.Errorf("%s: opened (%q), want an error", p, got)
		}
		if _, e := fs.Stat(p); e == 0 && p != "/../secret.txt" {
			t.Errorf("stat %s: succeeded, want an error", p)
		}
	}
	// A symlink inside the mount still works.
	f, e := fs.OpenFile("ok_link", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("ok_link: %v", e)
	}
	defer f.Close()
	if got := readAll(t, f); got != "hello" {
		t.Errorf("ok_link reads %q", got)
	}
}

func TestGuestSymlinks(t *testing.T) {
	ws, secretPath := tree(t)
	fs := newFS(t, ws, false)
	for _, target := range []string{"../secret.txt", secretPath, "/etc/passwd", "sub/../../secret.txt", "sub/../../ws/a.txt"} {
		if e := fs.Symlink(target, "evil"); e != experimentalsys.EPERM {
			t.Errorf("symlink evil -> %s: errno %v, want EPERM", target, e)
		}
	}
	// "self/up" lies in the mount root, not one level down: "../x" from
	// there leaves the mount.
	if e := fs.Symlink(".", "self"); e != 0 {
		t.Fatal(e)
	}
	if e := fs.Symlink("../secret.txt", "self/up"); e != experimentalsys.EPERM {
		t.Errorf("symlink self/up -> ../secret.txt: errno %v, want EPERM", e)
	}
	if e := fs.Symlink("../a.txt", "sub/good"); e != 0 {
		t.Fatalf("symlink sub/good -> ../a.txt: %v", e)
	}
	if dst, e := fs.Readlink("sub/good"); e != 0 || dst != "../a.txt" {
		t.Errorf("readlink: %q, %v", dst, e)
	}
	f, e := fs.OpenFile("sub/good", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer f.Close()
	if got := readAll(t, f); got != "hello" {
		t.Errorf("sub/good reads %q", got)
	}
}

func TestReadOnly(t *testing.T) {
	ws, _ := tree(t)
	fs := newFS(t, ws, true)
	for name, e := range map[string]experimentalsys.Errno{
		"mkdir":   fs.Mkdir("d", 0o755),
		"unlink":  fs.Unlink("a.txt"),
		"rmdir":   fs.Rmdir("sub"),
		"rename":  fs.Rename("a.txt", "b.txt"),
		"symlink": fs.Symlink("a.txt", "l"),
		"link":    fs.Link("a.txt", "l"),
		"chmod":   fs.Chmod("a.txt", 0o777),
		"utimens": fs.Utimens("a.txt", 0, 0),
	} {
		if e != experimentalsys.EROFS {
			t.Errorf("%s: errno %v, want EROFS", name, e)
		}
	}
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_WRONLY, experimentalsys.O_RDWR, experimentalsys.O_RDONLY | experimentalsys.O_CREAT, experimentalsys.O_RDONLY | experimentalsys.O_TRUNC, experimentalsys.O_APPEND} {
		if _, e := fs.OpenFile("a.txt", flag, 0o644); e != experimentalsys.EROFS {
			t.Errorf("open with flag %#x: errno %v, want EROFS", flag, e)
		}
	}
	f, e := fs.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer f.Close()
	if _, e := f.Write([]byte("x")); e == 0 {
		t.Error("write on a read-only file succeeded")
	}
	if e := f.Truncate(0); e == 0 {
		t.Error("truncate on a read-only file succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "hello" {
		t.Errorf("a.txt changed to %q", b)
	}
}

func TestReadWrite(t *testing.T) {
	ws, _ := tree(t)
	fs := newFS(t, ws, false)
	if e := fs.Mkdir("sub/new", 0o755); e != 0 {
		t.Fatal(e)
	}
	f, e := fs.OpenFile("sub/new/f.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_TRUNC, 0o644)
	if e != 0 {
		t.Fatal(e)
	}
	if _, e := f.Write([]byte("written")); e != 0 {
		t.Fatal(e)
	}
	if off, e := f.Seek(0, io.SeekStart); e != 0 || off != 0 {
		t.Fatalf("seek: %d %v", off, e)
	}
	if got := readAll(t, f); got != "written" {
		t.Errorf("read back %q", got)
	}
	f.Close()
	if e := fs.Rename("sub/new/f.txt", "g.txt"); e != 0 {
		t.Fatal(e)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "g.txt")); err != nil || string(b) != "written" {
		t.Errorf("host g.txt: %q %v", b, err)
	}
	if e := fs.Unlink("sub"); e != experimentalsys.EISDIR {
		t.Errorf("unlink dir: %v, want EISDIR", e)
	}
	if e := fs.Rmdir("g.txt"); e != experimentalsys.ENOTDIR {
		t.Errorf("rmdir file: %v, want ENOTDIR", e)
	}
	if e := fs.Rmdir("sub/new"); e != 0 {
		t.Errorf("rmdir: %v", e)
	}
	if _, e := fs.OpenFile("a.txt", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); e != experimentalsys.ENOTDIR {
		t.Errorf("O_DIRECTORY on a file: %v, want ENOTDIR", e)
	}
	if _, e := fs.OpenFile("ok_link", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0); e != experimentalsys.ELOOP {
		t.Errorf("O_NOFOLLOW on a symlink: %v, want ELOOP", e)
	}
	d, e := fs.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer d.Close()
	ents, e := d.Readdir(-1)
	if e != 0 {
		t.Fatal(e)
	}
	names := map[string]bool{}
	for _, ent := range ents {
		names[ent.Name] = true
	}
	for _, want := range []string{"a.txt", "sub", "g.txt", "abs_link"} {
		if !names[want] {
			t.Errorf("readdir lacks %s: %v", want, names)
		}
	}
}

// TestCreatedModes checks that files and directories a guest creates get the
// modes a shell would give them (0644 and 0755 less the umask), not wazero's
// 0600 and 0700, whichever path creation takes.
func TestCreatedModes(t *testing.T) {
	ref := t.TempDir()
	refFile, err := os.OpenFile(filepath.Join(ref, "f"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	refFile.Close()
	if err := os.Mkdir(filepath.Join(ref, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantFile, _ := os.Stat(filepath.Join(ref, "f"))
	wantDir, _ := os.Stat(filepath.Join(ref, "d"))

	for _, guarded := range []bool{false, true} {
		ws := t.TempDir()
		var protected []Protected
		if guarded {
			p := filepath.Join(ws, "protected.txt")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			protected = []Protected{{Path: p, What: "a test file"}}
		}
		fs, err := New(ws, false, protected)
		if err != nil {
			t.Fatal(err)
		}
		defer fs.Close()
		// The modes wazero passes for path_open and path_create_directory.
		f, e := fs.OpenFile("new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o600)
		if e != 0 {
			t.Fatal(e)
		}
		f.Close()
		if e := fs.Mkdir("newdir", 0o700); e != 0 {
			t.Fatal(e)
		}
		if fi, err := os.Stat(filepath.Join(ws, "new.txt")); err != nil || fi.Mode().Perm() != wantFile.Mode().Perm() {
			t.Errorf("guarded=%v: created file mode %v (%v), want %v", guarded, fi.Mode().Perm(), err, wantFile.Mode().Perm())
		}
		if fi, err := os.Stat(filepath.Join(ws, "newdir")); err != nil || fi.Mode().Perm() != wantDir.Mode().Perm() {
			t.Errorf("guarded=%v: created directory mode %v (%v), want %v", guarded, fi.Mode().Perm(), err, wantDir.Mode().Perm())
		}
	}
}
