package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRemoveHeld: a session a run holds is not removed (ErrBusy); once
// the run has closed it, Remove deletes it, and a symbolic link planted in
// place of a session is removed, not followed.
func TestRemoveHeld(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a", ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir, "s1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Remove while held: %v, want ErrBusy", err)
	}
	if _, err := os.Stat(filepath.Join(Dir(dir), "s1", "meta.json")); err != nil {
		t.Fatalf("the held session was touched: %v", err)
	}
	s.Close()
	if err := Remove(dir, "s1"); err != nil {
		t.Fatalf("Remove after Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(Dir(dir), "s1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("s1 still there: %v", err)
	}
	if err := Remove(dir, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove again: %v, want ErrNotFound", err)
	}
	if err := Remove(dir, "../x"); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Errorf("Remove ../x: %v", err)
	}
	// A link in place of a session: refused, and its target is untouched.
	target := t.TempDir()
	os.WriteFile(filepath.Join(target, "meta.json"), []byte(`{"id":"s2"}`), 0o600)
	if err := os.Symlink(target, filepath.Join(Dir(dir), "s2")); err != nil {
		t.Skip(err)
	}
	Remove(dir, "s2")
	if _, err := os.Stat(filepath.Join(target, "meta.json")); err != nil {
		t.Errorf("the link's target lost its file: %v", err)
	}
}

// TestResolve: an id, last, a unique prefix; an ambiguous prefix lists
// the ids; an unknown ref is ErrNotFound saying to use a prefix, and which
// id has it inside; a directory without a readable meta is returned as it
// is, for Events to report.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	if _, err := Resolve(dir, Last); !errors.Is(err, ErrNotFound) {
		t.Errorf("last without sessions: %v, want ErrNotFound", err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"abc1", "abc2", "abd", "ab"} {
		s, err := Create(dir, Meta{Agent: "a", ID: id, Created: t0.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if err := os.Mkdir(filepath.Join(Dir(dir), "broken"), 0o700); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"last": "ab", "abd": "abd", "abc1": "abc1", "abc2": "abc2", "ab": "ab", "broken": "broken", "../x": "../x"} {
		if got, err := Resolve(dir, ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	if _, err := Resolve(dir, "abc"); err == nil || !strings.Contains(err.Error(), "abc2, abc1") {
		t.Errorf("Resolve(abc) = %v; want the two ids listed", err)
	}
	if got, err := Resolve(dir, "a"); err == nil {
		t.Errorf("Resolve(a) = %q; want ambiguous", got)
	}
	for ref, want := range map[string]string{"zz": "session not found: zz; use a prefix of the id, or last", "abd0": "session not found: abd0; use a prefix of the id, or last",
		"c2": `session not found: c2; use a prefix of the id, or last (abc2 has "c2" inside, not at its start)`} {
		if got, err := Resolve(dir, ref); !errors.Is(err, ErrNotFound) || err.Error() != want {
			t.Errorf("Resolve(%q) = %q, %v; want %s", ref, got, err, want)
		}
	}
}
