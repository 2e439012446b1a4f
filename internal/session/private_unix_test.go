//go:build unix

package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// wantPrivate fails unless every directory under root is 0700 and every
// file 0600; it returns how many files it saw.
func wantPrivate(t *testing.T, root string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %04o, want %04o", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCreatePrivate: a new session, its data_dir and its sessions directory
// are private: 0700 and 0600, also when the sessions directory was left
// readable by others (as older versions made it, past any umask).
func TestCreatePrivate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "a", "data")
	s, err := Create(data, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "secret"}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := wantPrivate(t, filepath.Dir(data)); n != 3 {
		t.Errorf("%d files, want meta.json, events.jsonl and lock", n)
	}

	// A sessions directory of an older version.
	if err := os.Chmod(Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err = Create(data, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	wantPrivate(t, Dir(data))
}

// TestOpenMakesPrivate: continuing a session that an older version left
// readable by others (0755 directories, 0644 files) makes it private.
func TestOpenMakesPrivate(t *testing.T) {
	data := t.TempDir()
	seed(t, data, "s1")
	dir := filepath.Join(Dir(data), "s1")
	for p, m := range map[string]os.FileMode{
		data: 0o755, Dir(data): 0o755, dir: 0o755,
		filepath.Join(dir, "meta.json"): 0o644, filepath.Join(dir, "events.jsonl"): 0o644, filepath.Join(dir, "lock"): 0o644,
	} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(data, "s1")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	wantPrivate(t, Dir(data))
	// data_dir, which others may only read, is left as it is.
	if st, err := os.Stat(data); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("data_dir mode %v, %v; want 0755 left alone", st.Mode(), err)
	}
}

// TestRefusesWritableByOthers: a data_dir, sessions directory, session
// directory or session file that group or others may write is refused,
// saying so and how to fix it; nothing is written.
func TestRefusesWritableByOthers(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(data string) string
		mode os.FileMode
		want string
	}{
		{"data_dir", func(d string) string { return d }, 0o777, "is writable by group and others (mode 0777)"},
		{"data_dir group", func(d string) string { return d }, 0o770, "is writable by its group (mode 0770)"},
		{"data_dir sticky", func(d string) string { return d }, 0o777 | os.ModeSticky, "is writable by group and others (mode 0777)"},
		{"sessions", Dir, 0o757, "is writable by others (mode 0757)"},
		{"session", func(d string) string { return filepath.Join(Dir(d), "s1") }, 0o777, "is writable by group and others"},
		{"events.jsonl", func(d string) string { return filepath.Join(Dir(d), "s1", "events.jsonl") }, 0o666, "is writable by group and others (mode 0666)"},
		{"lock", func(d string) string { return filepath.Join(Dir(d), "s1", "lock") }, 0o622, "is writable by group and others (mode 0622)"},
		{"meta.json", func(d string) string { return filepath.Join(Dir(d), "s1", "meta.json") }, 0o646, "is writable by others (mode 0646)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			seed(t, data, "s1")
			p := tc.path(data)
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			s, err := Open(data, "s1")
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), p+" "+tc.want) || !strings.Contains(err.Error(), "Fix: chmod go-w it") {
				t.Errorf("Open: %v; want ErrNotPrivate: %s %s, with the fix", err, p, tc.want)
			}
			if st, _ := os.Stat(filepath.Join(Dir(data), "s1", "events.jsonl")); st.Size() != 0 {
				t.Errorf("events.jsonl written (%d bytes)", st.Size())
			}
			if strings.HasPrefix(tc.name, "data_dir") {
				if _, err := Create(data, Meta{Agent: "a"}); !errors.Is(err, ErrNotPrivate) {
					t.Errorf("Create: %v, want ErrNotPrivate", err)
				}
				if ents, _ := os.ReadDir(Dir(data)); len(ents) != 1 {
					t.Errorf("Create made a session: %d sessions", len(ents))
				}
			}
		})
	}
}

// TestRefusesOtherOwner needs root to give a data_dir, a sessions
// directory, a session directory or a session file to another user.
func TestRefusesOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown")
	}
	const nobody = 65534
	for _, tc := range []struct {
		name string
		path func(data string) string
	}{
		{"data_dir", func(d string) string { return d }},
		{"sessions", Dir},
		{"session", func(d string) string { return filepath.Join(Dir(d), "s1") }},
		{"events.jsonl", func(d string) string { return filepath.Join(Dir(d), "s1", "events.jsonl") }},
		{"lock", func(d string) string { return filepath.Join(Dir(d), "s1", "lock") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			seed(t, data, "s1")
			p := tc.path(data)
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			s, err := Open(data, "s1")
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			want := p + " is owned by uid 65534, not by you (uid 0)"
			if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Fix: chown it to yourself") {
				t.Errorf("Open: %v; want ErrNotPrivate: %s, with the fix", err, want)
			}
			if tc.name == "data_dir" || tc.name == "sessions" {
				if _, err := Create(data, Meta{Agent: "a"}); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), want) {
					t.Errorf("Create: %v, want ErrNotPrivate: %s", err, want)
				}
			}
		})
	}
}

// TestRefusesFIFO: a named pipe planted as events.jsonl is refused at once
// rather than opened (which would block until someone reads it).
func TestRefusesFIFO(t *testing.T) {
	data := t.TempDir()
	seed(t, data, "s1")
	p := filepath.Join(Dir(data), "s1", "events.jsonl")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := Open(data, "s1")
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), p+" is not a regular file") {
			t.Errorf("Open: %v; want ErrNotPrivate naming the pipe", err)
		}
	case <-time.After(10 * time.Second):
		// Release the blocked open, then fail.
		if f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer f.Close()
		}
		<-done
		t.Fatal("Open blocked on a named pipe")
	}
}
