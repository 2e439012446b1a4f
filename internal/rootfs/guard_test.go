package rootfs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// project lays out a project directory as 'agenthost init' does, with the
// files agenthost protects inside it:
//
//	ws/agents.hcl                        the config (protected)
//	ws/.agenthost/cache/wazero-x/code     the compilation cache (in the protected data dir)
//	ws/.agenthost/sessions/s1/events.jsonl
//	ws/conf/inner/input.md               a file() input (protected; conf and conf/inner pinned)
//	ws/conf/inner/other.md, ws/conf/free.md, ws/notes.txt, ws/dir/f.txt  the user's files
//	ws/hostlink -> .agenthost            a link planted on the host
//	ws/cfglink -> agents.hcl
type project struct {
	ws        string
	protected []Protected
	// snapshot of every file under ws/.agenthost and of the protected
	// files: path → content, mode, mtime.
	before map[string]fileState
}

type fileState struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

func newProject(t *testing.T) *project {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	files := map[string]string{
		"agents.hcl":                          "plugin \"core\" {}\n",
		".agenthost/cache/wazero-x/code":      "native code",
		".agenthost/sessions/s1/events.jsonl": "{\"type\":\"run.start\"}\n",
		"conf/inner/input.md":                 "input",
		"conf/inner/other.md":                 "other",
		"conf/free.md":                        "free",
		"notes.txt":                           "notes",
		"dir/f.txt":                           "f",
	}
	for name, data := range files {
		p := filepath.Join(ws, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	must(t, os.Symlink(".agenthost", filepath.Join(ws, "hostlink")))
	must(t, os.Symlink("agents.hcl", filepath.Join(ws, "cfglink")))
	pr := &project{ws: ws, protected: []Protected{
		{Path: filepath.Join(ws, ".agenthost"), What: "the data directory"},
		{Path: filepath.Join(ws, "agents.hcl"), What: "the config file"},
		{Path: filepath.Join(ws, "conf", "inner", "input.md"), What: "a file read by the config"},
		{Path: filepath.Join(ws, "missing.wasm"), What: "a plugin that does not exist"},
	}}
	pr.before = pr.snapshot(t)
	return pr
}

func (pr *project) snapshot(t *testing.T) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	add := func(p string) {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(pr.ws, p)
		out[rel] = fileState{string(data), fi.Mode(), fi.ModTime()}
	}
	err := filepath.WalkDir(filepath.Join(pr.ws, ".agenthost"), func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			add(p)
		}
		return err
	})
	must(t, err)
	for _, p := range []string{"agents.hcl", "conf", "conf/inner", "conf/inner/input.md"} {
		add(filepath.Join(pr.ws, p))
	}
	return out
}

// unchanged fails the test if a protected file or anything under the data
// dir changed, appeared or went away.
func (pr *project) unchanged(t *testing.T) {
	t.Helper()
	now := pr.snapshot(t)
	for p, want := range pr.before {
		got, ok := now[p]
		switch {
		case !ok:
			t.Errorf("%s is gone", p)
		case got.data != want.data:
			t.Errorf("%s changed to %q", p, got.data)
		case got.mode != want.mode:
			t.Errorf("%s mode changed to %v", p, got.mode)
		case !got.mtime.Equal(want.mtime) && !want.mode.IsDir():
			t.Errorf("%s mtime changed", p)
		}
	}
	for p := range now {
		if _, ok := pr.before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

func (pr *project) fs(t *testing.T) *FS {
	t.Helper()
	f, err := New(pr.ws, false, pr.protected)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !f.Guarded() {
		t.Fatal("a mount holding protected entries is not guarded")
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const (
	rdonly = experimentalsys.O_RDONLY
	wronly = experimentalsys.O_WRONLY
	creat  = experimentalsys.O_CREAT
	trunc  = experimentalsys.O_TRUNC
	excl   = experimentalsys.O_EXCL
)

// TestProtectedRefused tries every operation on every way of naming a
// protected entry: each is refused with EACCES (or, for creating a link,
// with the same errno as for the entry itself), and nothing changes.
func TestProtectedRefused(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	// Names of protected entries, and of paths through them, including
	// aliases by "..", host symlinks and symlinks the guest makes.
	must(t, errnoErr(f.Symlink(".agenthost", "guestlink")))
	must(t, errnoErr(f.Symlink("../agents.hcl", "dir/cfg")))
	must(t, errnoErr(f.Symlink("inner", "conf/in")))
	names := []string{
		"agents.hcl", "./agents.hcl", "dir/../agents.hcl", "/agents.hcl", "cfglink", "dir/cfg",
		".agenthost", ".agenthost/", ".agenthost/cache", ".agenthost/cache/wazero-x/code",
		".agenthost/sessions/s1/events.jsonl", "hostlink", "hostlink/cache/wazero-x/code",
		"guestlink/sessions/s1/events.jsonl", "conf/inner/input.md", "conf/in/input.md",
	}
	for _, n := range names {
		for _, flag := range []experimentalsys.Oflag{rdonly, wronly, experimentalsys.O_RDWR, wronly | trunc, wronly | experimentalsys.O_APPEND, wronly | creat | trunc} {
			if of, e := f.OpenFile(n, flag, 0o644); e != experimentalsys.EACCES {
				if e == 0 {
					of.Close()
				}
				t.Errorf("open %s flag %#x: errno %v, want EACCES", n, flag, e)
			}
		}
		if _, e := f.Stat(n); e != experimentalsys.EACCES {
			t.Errorf("stat %s: errno %v, want EACCES", n, e)
		}
		// Aliases themselves (links made by the guest or planted on the
		// host) may be removed, renamed or linked like any link; only
		// what goes through them is refused.
		alias := n == "cfglink" || n == "dir/cfg" || n == "hostlink"
		for _, op := range []struct {
			name    string
			onAlias bool
			do      func() experimentalsys.Errno
		}{
			{"chmod", true, func() experimentalsys.Errno { return f.Chmod(n, 0o777) }},
			{"utimens", true, func() experimentalsys.Errno { return f.Utimens(n, 0, 0) }},
			{"unlink", false, func() experimentalsys.Errno { return f.Unlink(n) }},
			{"rmdir", false, func() experimentalsys.Errno { return f.Rmdir(n) }},
			{"rename away", false, func() experimentalsys.Errno { return f.Rename(n, "moved") }},
			{"rename over", false, func() experimentalsys.Errno { return f.Rename("notes.txt", n) }},
			{"link", false, func() experimentalsys.Errno { return f.Link(n, "hard") }},
			{"mkdir inside", true, func() experimentalsys.Errno { return f.Mkdir(n+"/new", 0o755) }},
			{"symlink inside", true, func() experimentalsys.Errno { return f.Symlink("x", n+"/new") }},
			{"create inside", true, func() experimentalsys.Errno { return openErr(f, n+"/new", wronly|creat) }},
			{"rename into", true, func() experimentalsys.Errno { return f.Rename("dir/f.txt", n+"/f.txt") }},
			{"readlink through", true, func() experimentalsys.Errno { return readlinkErr(f, n+"/x") }},
		} {
			if alias && !op.onAlias {
				continue
			}
			if e := op.do(); e != experimentalsys.EACCES {
				t.Errorf("%s %s: errno %v, want EACCES", op.name, n, e)
			}
		}
	}
	// Making a directory or a link where a protected entry is.
	for name, e := range map[string]experimentalsys.Errno{
		"mkdir .agenthost":   f.Mkdir(".agenthost", 0o755),
		"symlink agents.hcl": f.Symlink("notes.txt", "agents.hcl"),
		"link agents.hcl":    f.Link("notes.txt", "agents.hcl"),
		"create agents.hcl":  openErr(f, "agents.hcl", wronly|creat|excl),
	} {
		if e != experimentalsys.EACCES {
			t.Errorf("%s: errno %v, want EACCES", name, e)
		}
	}
	pr.unchanged(t)
}

func errnoErr(e experimentalsys.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func openErr(f *FS, p string, flag experimentalsys.Oflag) experimentalsys.Errno {
	of, e := f.OpenFile(p, flag, 0o644)
	if e == 0 {
		of.Close()
	}
	return e
}

func readlinkErr(f *FS, p string) experimentalsys.Errno {
	_, e := f.Readlink(p)
	return e
}

// TestPinned: the directories (and links) the host walks through to reach a
// protected entry cannot be renamed, removed, replaced, linked or chmod'ed,
// so the protected entry cannot be moved aside and replaced by a forgery;
// the rest of those directories is the guest's as usual.
func TestPinned(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	must(t, errnoErr(f.Mkdir("fresh", 0o755)))
	for name, e := range map[string]experimentalsys.Errno{
		"rename conf":          f.Rename("conf", "conf2"),
		"rename conf/inner":    f.Rename("conf/inner", "inner2"),
		"rename over conf":     f.Rename("fresh", "conf"),
		"rename over inner":    f.Rename("fresh", "conf/inner"),
		"rmdir conf":           f.Rmdir("conf"),
		"chmod conf":           f.Chmod("conf", 0o000),
		"chmod conf/inner":     f.Chmod("conf/inner/", 0o000),
		"utimens conf":         f.Utimens("conf", 0, 0),
		"chmod the mount root": f.Chmod(".", 0o000),
		"chmod the root by ..": f.Chmod("dir/..", 0o000),
	} {
		if e != experimentalsys.EACCES {
			t.Errorf("%s: errno %v, want EACCES", name, e)
		}
	}
	// The user's files next to the protected one are free.
	if e := f.Rename("conf/inner/other.md", "conf/inner/other2.md"); e != 0 {
		t.Errorf("rename other.md: %v", e)
	}
	if e := f.Rename("conf/free.md", "free.md"); e != 0 {
		t.Errorf("rename free.md: %v", e)
	}
	if e := f.Chmod("conf/inner/other2.md", 0o600); e != 0 {
		t.Errorf("chmod other2.md: %v", e)
	}
	writeFile(t, f, "conf/inner/new.md", "new")
	if got := readFile(t, f, "conf/inner/other2.md"); got != "other" {
		t.Errorf("other2.md reads %q", got)
	}
	if e := f.Unlink("conf/inner/new.md"); e != 0 {
		t.Errorf("unlink new.md: %v", e)
	}
	if e := f.Rename("fresh", "dir/fresh"); e != 0 {
		t.Errorf("rename fresh: %v", e)
	}
	if e := f.Rmdir("dir/fresh"); e != 0 {
		t.Errorf("rmdir fresh: %v", e)
	}
	pr.unchanged(t)
}

// TestListingHidesProtected: listings leave protected entries out (found by
// identity, so an alias hides as well), and keep everything else.
func TestListingHidesProtected(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	must(t, os.Link(filepath.Join(pr.ws, "agents.hcl"), filepath.Join(pr.ws, "dir", "hardcfg")))
	list := func(dir string, n int) []string {
		d, e := f.OpenFile(dir, rdonly|experimentalsys.O_DIRECTORY, 0)
		if e != 0 {
			t.Fatalf("open %s: %v", dir, e)
		}
		defer d.Close()
		var names []string
		for {
			ents, e := d.Readdir(n)
			if e != 0 {
				t.Fatalf("readdir %s: %v", dir, e)
			}
			if len(ents) == 0 {
				break
			}
			for _, ent := range ents {
				names = append(names, ent.Name)
			}
			if n <= 0 {
				break
			}
		}
		sort.Strings(names)
		return names
	}
	for _, n := range []int{-1, 1, 2} {
		if got, want := fmt.Sprint(list(".", n)), "[cfglink conf dir hostlink notes.txt]"; got != want {
			t.Errorf("readdir(%d) of the root: %s, want %s", n, got, want)
		}
		if got, want := fmt.Sprint(list("conf/inner", n)), "[other.md]"; got != want {
			t.Errorf("readdir(%d) of conf/inner: %s, want %s", n, got, want)
		}
		if got, want := fmt.Sprint(list("dir", n)), "[f.txt]"; got != want {
			t.Errorf("readdir(%d) of dir: %s, want %s", n, got, want)
		}
	}
	if _, e := f.OpenFile("dir/hardcfg", rdonly, 0); e != experimentalsys.EACCES {
		t.Errorf("open a hard link to agents.hcl planted on the host: %v, want EACCES", e)
	}
}

// TestGuardedMountWorks: the rest of a guarded mount behaves as usual.
func TestGuardedMountWorks(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	writeFile(t, f, "dir/sub/../new.txt", "new")
	if got := readFile(t, f, "dir/new.txt"); got != "new" {
		t.Errorf("dir/new.txt reads %q", got)
	}
	must(t, errnoErr(f.Symlink("../notes.txt", "dir/notes")))
	if got := readFile(t, f, "dir/notes"); got != "notes" {
		t.Errorf("dir/notes reads %q", got)
	}
	must(t, errnoErr(f.Symlink("dir", "d")))
	if got := readFile(t, f, "d/notes"); got != "notes" {
		t.Errorf("d/notes reads %q", got)
	}
	writeFile(t, f, "d/through.txt", "through")
	if b, err := os.ReadFile(filepath.Join(pr.ws, "dir", "through.txt")); err != nil || string(b) != "through" {
		t.Errorf("write through a link to a directory: %q %v", b, err)
	}
	if st, e := f.Lstat("d"); e != 0 || st.Mode&fs.ModeSymlink == 0 {
		t.Errorf("lstat d: %v %v", st.Mode, e)
	}
	if st, e := f.Stat("d/"); e != 0 || !st.Mode.IsDir() {
		t.Errorf("stat d/: %v %v", st.Mode, e)
	}
	if _, e := f.OpenFile("d", rdonly|experimentalsys.O_NOFOLLOW, 0); e != experimentalsys.ELOOP {
		t.Errorf("O_NOFOLLOW on a link: %v, want ELOOP", e)
	}
	if _, e := f.OpenFile("notes.txt/", rdonly, 0); e != experimentalsys.ENOENT {
		t.Errorf("a file with a trailing slash: %v, want ENOENT", e)
	}
	if _, e := f.OpenFile("notes.txt", wronly|creat|excl, 0o644); e != experimentalsys.EEXIST {
		t.Errorf("O_EXCL on an existing file: %v, want EEXIST", e)
	}
	if e := f.Link("notes.txt", "dir/hard"); e != 0 {
		t.Errorf("link: %v", e)
	}
	writeFile(t, f, "dir/hard", "via hard link")
	if got := readFile(t, f, "notes.txt"); got != "via hard link" {
		t.Errorf("notes.txt reads %q", got)
	}
	// a link made through a linked directory is checked where it lands
	must(t, errnoErr(f.Symlink(".", "self")))
	if e := f.Symlink("../x", "self/up"); e != experimentalsys.EPERM {
		t.Errorf("symlink self/up -> ../x (out of the mount): %v, want EPERM", e)
	}
	if e := f.Symlink("../../x", "dir/d2/../up"); e != experimentalsys.EPERM {
		t.Errorf("symlink dir/up -> ../../x: %v, want EPERM", e)
	}
	for _, p := range []string{"../notes.txt", "dir/../../notes.txt"} {
		// ".." is lexical on guest paths and cannot climb above the mount
		if got := readFile(t, f, p); got != "via hard link" {
			t.Errorf("%s reads %q", p, got)
		}
	}
	must(t, os.Symlink("../secret", filepath.Join(pr.ws, "out")))
	if _, e := f.OpenFile("out", rdonly, 0); e != experimentalsys.EPERM {
		t.Errorf("a host link out of the mount: %v, want EPERM", e)
	}
	if e := f.Rename("dir", "dir2"); e != 0 {
		t.Errorf("rename dir: %v", e)
	}
	if e := f.Rmdir("."); e != experimentalsys.EINVAL {
		t.Errorf("rmdir the root: %v, want EINVAL", e)
	}
	if e := f.Unlink("."); e != experimentalsys.EISDIR {
		t.Errorf("unlink the root: %v, want EISDIR", e)
	}
	pr.unchanged(t)
}

func writeFile(t *testing.T, f *FS, p, data string) {
	t.Helper()
	of, e := f.OpenFile(p, wronly|creat|trunc, 0o644)
	if e != 0 {
		t.Fatalf("create %s: %v", p, e)
	}
	defer of.Close()
	if _, e := of.Write([]byte(data)); e != 0 {
		t.Fatalf("write %s: %v", p, e)
	}
}

func readFile(t *testing.T, f *FS, p string) string {
	t.Helper()
	of, e := f.OpenFile(p, rdonly, 0)
	if e != 0 {
		t.Fatalf("open %s: %v", p, e)
	}
	defer of.Close()
	return readAll(t, of)
}

// TestSwapRace: while one goroutine keeps replacing a name (a file, a
// directory) with a symbolic link to a protected entry and back, others
// open, truncate, chmod and touch through that name. Nothing protected
// changes. The guest swaps through the FS; the host swapper works behind
// its back, where only opens are checked (by identity).
func TestSwapRace(t *testing.T) {
	forged := []byte("pwned")
	tests := []struct {
		name   string
		swap   func(f *FS, ws string, i int)
		attack func(f *FS)
	}{
		{"open a swapped file", swapFile("x", "agents.hcl"), func(f *FS) {
			if of, e := f.OpenFile("x", wronly|trunc, 0); e == 0 {
				of.Write(forged)
				of.Close()
			}
		}},
		{"chmod a swapped file", swapFile("x", "agents.hcl"), func(f *FS) {
			f.Chmod("x", 0o600)
			f.Utimens("x", 0, 0)
		}},
		{"open through a swapped directory", func(f *FS, _ string, i int) {
			f.Unlink("d")
			f.Unlink("d/code")
			f.Rmdir("d")
			if i%2 == 0 {
				f.Symlink(".agenthost/cache/wazero-x", "d")
			} else {
				f.Mkdir("d", 0o755)
				writeQuiet(f, "d/code")
			}
		}, func(f *FS) {
			if of, e := f.OpenFile("d/code", wronly|trunc, 0); e == 0 {
				of.Write(forged)
				of.Close()
			}
			f.Chmod("d/code", 0o600)
		}},
		{"a link to a pinned directory's file", swapFile("y", "conf/inner/input.md"), func(f *FS) {
			f.Chmod("y", 0o600)
			if of, e := f.OpenFile("y", wronly|trunc, 0); e == 0 {
				of.Write(forged)
				of.Close()
			}
		}},
		{"the host swaps", func(_ *FS, ws string, i int) {
			z := filepath.Join(ws, "z")
			if i%2 == 0 {
				os.Symlink("agents.hcl", z+".tmp")
			} else {
				os.WriteFile(z+".tmp", nil, 0o644)
			}
			os.Rename(z+".tmp", z)
		}, func(f *FS) {
			if of, e := f.OpenFile("z", wronly|trunc, 0); e == 0 {
				of.Write(forged)
				of.Close()
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := newProject(t)
			f := pr.fs(t)
			stop := make(chan struct{})
			swapped := make(chan struct{})
			go func() {
				defer close(swapped)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					tc.swap(f, pr.ws, i)
				}
			}()
			var wg sync.WaitGroup
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 5000; i++ {
						tc.attack(f)
					}
				}()
			}
			wg.Wait()
			close(stop)
			<-swapped
			pr.unchanged(t)
		})
	}
}

// swapFile returns a swapper that atomically replaces name by a symbolic
// link to target on even rounds and by a regular file on odd ones.
func swapFile(name, target string) func(*FS, string, int) {
	return func(f *FS, _ string, i int) {
		if i%2 == 0 {
			f.Symlink(target, name+".tmp")
		} else {
			writeQuiet(f, name+".tmp")
		}
		f.Rename(name+".tmp", name)
	}
}

func writeQuiet(f *FS, p string) {
	if of, e := f.OpenFile(p, wronly|creat|trunc, 0o644); e == 0 {
		of.Close()
	}
}

// TestUnguardedMount: a mount without protected entries keeps the direct
// path, but still refuses a hard link to a protected file planted in it.
func TestUnguardedMount(t *testing.T) {
	pr := newProject(t)
	other := filepath.Join(filepath.Dir(pr.ws), "other")
	must(t, os.MkdirAll(other, 0o755))
	must(t, os.Link(filepath.Join(pr.ws, "agents.hcl"), filepath.Join(other, "cfg")))
	must(t, os.WriteFile(filepath.Join(other, "a.txt"), []byte("a"), 0o644))
	f, err := New(other, false, pr.protected)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Guarded() {
		t.Error("a mount without protected entries is guarded")
	}
	if _, e := f.OpenFile("cfg", rdonly, 0); e != experimentalsys.EACCES {
		t.Errorf("open a hard link to agents.hcl: %v, want EACCES", e)
	}
	if got := readFile(t, f, "a.txt"); got != "a" {
		t.Errorf("a.txt reads %q", got)
	}
}

// TestMountInsideProtected: a mount in (or of) a protected directory is
// refused.
func TestMountInsideProtected(t *testing.T) {
	pr := newProject(t)
	for _, dir := range []string{".agenthost", ".agenthost/cache", "hostlink/sessions"} {
		if _, err := New(filepath.Join(pr.ws, dir), false, pr.protected); err == nil || !bytes.Contains([]byte(err.Error()), []byte("inside the data directory")) {
			t.Errorf("mount %s: err = %v, want one saying it is inside the data directory", dir, err)
		}
	}
}

// TestProtectedThroughHostLinks: when the host reaches a protected file
// through symbolic links inside the mount, those links are pinned too.
func TestProtectedThroughHostLinks(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "real"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "real", "agents.hcl"), []byte("cfg"), 0o644))
	must(t, os.Symlink("real", filepath.Join(ws, "cfgdir")))
	f, err := New(ws, false, []Protected{{Path: filepath.Join(ws, "cfgdir", "agents.hcl"), What: "the config file"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	must(t, errnoErr(f.Mkdir("forged", 0o755)))
	for name, e := range map[string]experimentalsys.Errno{
		"unlink cfgdir":      f.Unlink("cfgdir"),
		"rename cfgdir":      f.Rename("cfgdir", "x"),
		"rename over cfgdir": f.Rename("forged", "cfgdir"),
		"rename real":        f.Rename("real", "x"),
		"open the config":    openErr(f, "cfgdir/agents.hcl", rdonly),
	} {
		if e != experimentalsys.EACCES {
			t.Errorf("%s: errno %v, want EACCES", name, e)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "cfgdir", "agents.hcl")); err != nil || string(b) != "cfg" {
		t.Errorf("the config reads %q, %v", b, err)
	}
}

func TestQuota(t *testing.T) {
	ws, _ := tree(t)
	base := newFS(t, ws, false)
	q := NewQuota(10, 3)
	f := base.WithQuota(q)
	of, e := f.OpenFile("big", wronly|creat, 0o644)
	if e != 0 {
		t.Fatal(e)
	}
	if n, e := of.Write([]byte("0123456")); n != 7 || e != 0 {
		t.Errorf("write 7: %d %v", n, e)
	}
	if n, e := of.Write([]byte("789abc")); n != 3 || e != 0 {
		t.Errorf("write 6 with 3 left: %d %v, want a short write of 3", n, e)
	}
	if n, e := of.Write([]byte("x")); n != 0 || e != ErrnoQuota {
		t.Errorf("write past the quota: %d %v, want %v", n, e, ErrnoQuota)
	}
	if n, e := of.Pwrite([]byte("x"), 0); n != 0 || e != ErrnoQuota {
		t.Errorf("pwrite past the quota: %d %v", n, e)
	}
	if e := of.Truncate(100); e != ErrnoQuota {
		t.Errorf("truncate that grows past the quota: %v", e)
	}
	if e := of.Truncate(5); e != 0 {
		t.Errorf("truncate that shrinks: %v", e)
	}
	of.Close()
	if b, _ := os.ReadFile(filepath.Join(ws, "big")); string(b) != "01234" {
		t.Errorf("big holds %q", b)
	}
	if bytes, entries := q.Exceeded(); !bytes || entries {
		t.Errorf("Exceeded = %v, %v; want true, false", bytes, entries)
	}
	// entries: "big" was one; a directory and a link make three
	must(t, errnoErr(f.Mkdir("d", 0o755)))
	must(t, errnoErr(f.Symlink("a.txt", "l")))
	for name, e := range map[string]experimentalsys.Errno{
		"create":  openErr(f, "new", wronly|creat),
		"mkdir":   f.Mkdir("d2", 0o755),
		"symlink": f.Symlink("a.txt", "l2"),
		"link":    f.Link("a.txt", "h"),
	} {
		if e != ErrnoQuota {
			t.Errorf("%s past the entry quota: %v, want %v", name, e, ErrnoQuota)
		}
	}
	// opening an existing file with O_CREAT creates nothing
	if e := openErr(f, "a.txt", wronly|creat); e != 0 {
		t.Errorf("O_CREAT on an existing file past the entry quota: %v", e)
	}
	if _, entries := q.Exceeded(); !entries {
		t.Error("entry quota not reported")
	}
	if b, n := q.Used(); b != 10 || n != 3 {
		t.Errorf("Used = %d, %d", b, n)
	}
	for _, p := range []string{"new", "d2", "l2", "h"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was created past the quota", p)
		}
	}
	// another view has its own quota; the base FS has none
	g := base.WithQuota(NewQuota(10, 3))
	if e := openErr(g, "other", wronly|creat); e != 0 {
		t.Errorf("create in a fresh view: %v", e)
	}
	for i := 0; i < 5; i++ {
		if e := base.Mkdir(fmt.Sprintf("free%d", i), 0o755); e != 0 {
			t.Errorf("mkdir without a quota: %v", e)
		}
	}
}

// TestQuotaHole: a write that starts past the end of the file is charged
// for the hole as well as its bytes, as a truncate that grows the file
// is; a hole that does not fit refuses the write and grows nothing.
func TestQuotaHole(t *testing.T) {
	ws, _ := tree(t)
	q := NewQuota(100, 10)
	f := newFS(t, ws, false).WithQuota(q)
	of, e := f.OpenFile("h", wronly|creat, 0o644)
	if e != 0 {
		t.Fatal(e)
	}
	defer of.Close()
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(ws, "h"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if n, e := of.Pwrite([]byte("x"), 1<<40-1); n != 0 || e != ErrnoQuota || size() != 0 {
		t.Errorf("pwrite at 1 TiB - 1: %d %v, size %d; want %v and nothing grown", n, e, size(), ErrnoQuota)
	}
	if _, e := of.Seek(1<<40-1, io.SeekStart); e != 0 {
		t.Fatal(e)
	}
	if n, e := of.Write([]byte("x")); n != 0 || e != ErrnoQuota || size() != 0 {
		t.Errorf("seek to 1 TiB - 1 and write: %d %v, size %d; want %v and nothing grown", n, e, size(), ErrnoQuota)
	}
	if b, _ := q.Used(); b != 0 {
		t.Errorf("refused holes left %d bytes charged", b)
	}
	// Within the quota: the hole and the bytes count.
	if n, e := of.Pwrite([]byte("ab"), 50); n != 2 || e != 0 {
		t.Errorf("pwrite at 50: %d %v", n, e)
	}
	if _, e := of.Seek(60, io.SeekStart); e != 0 {
		t.Fatal(e)
	}
	if n, e := of.Write([]byte("c")); n != 1 || e != 0 {
		t.Errorf("seek to 60 and write: %d %v", n, e)
	}
	if b, _ := q.Used(); b != 61 || size() != 61 {
		t.Errorf("used %d, size %d; want 61 and 61", b, size())
	}
	// Overwriting inside the file charges only the bytes.
	if n, e := of.Pwrite([]byte("d"), 10); n != 1 || e != 0 {
		t.Errorf("pwrite at 10: %d %v", n, e)
	}
	if e := of.Truncate(100); e != ErrnoQuota {
		t.Errorf("truncate past the quota (62 used, 39 more): %v", e)
	}
	if e := of.Truncate(99); e != 0 {
		t.Errorf("truncate to the quota (62 used, 38 more): %v", e)
	}
	if b, _ := q.Used(); b != 100 {
		t.Errorf("used %d, want 100", b)
	}
}

// TestQuotaConcurrent: views written concurrently each stop at their own
// quota.
func TestQuotaConcurrent(t *testing.T) {
	ws, _ := tree(t)
	base := newFS(t, ws, false)
	var wg sync.WaitGroup
	quotas := make([]*Quota, 4)
	for i := range quotas {
		quotas[i] = NewQuota(1000, 1)
		f := base.WithQuota(quotas[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			of, e := f.OpenFile(fmt.Sprintf("f%d", i), wronly|creat, 0o644)
			if e != 0 {
				t.Error(e)
				return
			}
			defer of.Close()
			for {
				if _, e := of.Write(make([]byte, 7)); e != 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, q := range quotas {
		fi, err := os.Stat(filepath.Join(ws, fmt.Sprintf("f%d", i)))
		if err != nil || fi.Size() != 1000 {
			t.Errorf("f%d: %v bytes, %v; want 1000", i, fi.Size(), err)
		}
		if b, _ := q.Exceeded(); !b {
			t.Errorf("quota %d not reported", i)
		}
	}
}
