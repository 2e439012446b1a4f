package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestSymlinksNotFollowed: a symbolic link planted under data_dir, as a
// session's file, its directory or the sessions directory, is refused with
// an error naming it, and the file or directory it points at, outside
// data_dir, is left as it was.
func TestSymlinksNotFollowed(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plant makes the link in data, pointing at victim (a file) or
		// victimDir (a directory holding a meta.json of session s1);
		// returns the path the error must name.
		plant func(t *testing.T, data, victim, victimDir string) string
		// create tries a new session instead of opening s1.
		create bool
	}{
		{name: "events.jsonl", plant: func(t *testing.T, data, victim, _ string) string {
			seed(t, data, "s1")
			return link(t, victim, data, "sessions", "s1", "events.jsonl")
		}},
		{name: "lock", plant: func(t *testing.T, data, victim, _ string) string {
			seed(t, data, "s1")
			return link(t, victim, data, "sessions", "s1", "lock")
		}},
		{name: "meta.json", plant: func(t *testing.T, data, victim, _ string) string {
			seed(t, data, "s1")
			p := filepath.Join(data, "sessions", "s1", "meta.json")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return link(t, victim, data, "sessions", "s1", "meta.json")
		}},
		{name: "session directory", plant: func(t *testing.T, data, _, victimDir string) string {
			if err := os.MkdirAll(filepath.Join(data, "sessions"), 0o700); err != nil {
				t.Fatal(err)
			}
			return link(t, victimDir, data, "sessions", "s1")
		}},
		{name: "sessions directory", create: true, plant: func(t *testing.T, data, _, victimDir string) string {
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			return link(t, victimDir, data, "sessions")
		}},
		{name: "link inside data_dir", plant: func(t *testing.T, data, _, _ string) string {
			// Even a link to another session's file is not followed.
			seed(t, data, "s1")
			seed(t, data, "s2")
			return link(t, filepath.Join("..", "s2", "events.jsonl"), data, "sessions", "s1", "events.jsonl")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			data := filepath.Join(base, "data")
			victim := filepath.Join(base, "victim.txt")
			victimDir := filepath.Join(base, "victimdir")
			writeFile(t, victim, "victim\n")
			writeFile(t, filepath.Join(victimDir, "meta.json"), `{"id": "s1", "agent": "a"}`+"\n")
			want := tc.plant(t, data, victim, victimDir)

			var s *Session
			var err error
			if tc.create {
				s, err = Create(data, Meta{Agent: "a"})
			} else {
				s, err = Open(data, "s1")
			}
			if err == nil {
				s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "secret"}))
				s.Close()
				t.Fatal("a session was opened through a symbolic link")
			}
			if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), want+" is a symbolic link") || !strings.Contains(err.Error(), "Fix: remove it") {
				t.Errorf("error %q, want ErrNotPrivate naming %s as a symbolic link, with the fix", err, want)
			}
			if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
				t.Errorf("victim file now holds %q", b)
			}
			ents, _ := os.ReadDir(victimDir)
			if len(ents) != 1 {
				t.Errorf("victim directory now holds %d entries, want only its meta.json", len(ents))
			}
			if b, _ := os.ReadFile(filepath.Join(data, "sessions", "s2", "events.jsonl")); len(b) != 0 {
				t.Errorf("the linked session's events.jsonl now holds %q", b)
			}
		})
	}
}

// TestCreateExisting: Create never reuses a session directory.
func TestCreateExisting(t *testing.T) {
	data := t.TempDir()
	seed(t, data, "s1")
	if _, err := Create(data, Meta{Agent: "a", ID: "s1"}); err == nil || !strings.Contains(err.Error(), "session s1 already exists") {
		t.Fatalf("Create of an existing id: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "sessions", "s1", "meta.json")); !strings.Contains(string(b), `"id": "s1"`) {
		t.Errorf("meta.json rewritten: %s", b)
	}
}

// seed writes session id under data as a run would leave it.
func seed(t *testing.T, data, id string) {
	t.Helper()
	s, err := Create(data, Meta{Agent: "a", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// link makes the symbolic link elem... to target, and returns its path.
func link(t *testing.T, target string, elem ...string) string {
	t.Helper()
	p := filepath.Join(elem...)
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	return p
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
