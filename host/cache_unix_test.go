//go:build unix

package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolveCacheDirCreatesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "cache")
	got, err := ResolveCacheDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != dir {
		t.Errorf("ResolveCacheDir = %s, want %s", got, dir)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir mode %v, %v; want 0700", st.Mode(), err)
	}
}

func TestResolveCacheDirDefault(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", base)
	t.Setenv("HOME", base)
	got, err := ResolveCacheDir("")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := DefaultCacheDir()
	if got != want || !strings.HasPrefix(got, base) {
		t.Errorf("ResolveCacheDir(\"\") = %s, want %s under %s", got, want, base)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if _, err := ResolveCacheDir(""); err == nil || !strings.Contains(err.Error(), "set AGENTHOST_CACHE_DIR") {
		t.Errorf("without HOME: %v, want the fix named", err)
	}
}

func TestResolveCacheDirRefusesWritableByOthers(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o770, 0o702, 0o777 | os.ModeSticky} {
		dir := filepath.Join(t.TempDir(), "cache")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := ResolveCacheDir(dir)
		if !errors.Is(err, errNotPrivate) || !strings.Contains(err.Error(), "chmod go-w") {
			t.Errorf("mode %o: %v, want refused with the fix", mode, err)
		}
	}
}

// TestResolveCacheDirRefusesOtherOwner needs root to give a directory and a
// cache entry to another user.
func TestResolveCacheDirRefusesOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown")
	}
	const nobody = 65534
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveCacheDir(dir); !errors.Is(err, errNotPrivate) || !strings.Contains(err.Error(), "is owned by uid 65534, not by you (uid 0)") {
		t.Errorf("dir of another user: %v", err)
	}
	// A cache entry of another user in an otherwise private cache.
	if err := os.Chown(dir, 0, 0); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "wazero-v1-amd64-linux", "0123")
	if err := os.MkdirAll(filepath.Dir(entry), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(entry, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveCacheDir(dir); !errors.Is(err, errNotPrivate) || !strings.Contains(err.Error(), "0123 is owned by uid 65534") {
		t.Errorf("entry of another user: %v", err)
	}
}

// TestResolveCacheDirRemovesStaleTemp: a temporary file an interrupted
// process left in the cache is removed once it is old; a recent one (a
// write in progress) is kept.
func TestResolveCacheDirRemovesStaleTemp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	// wazero's entries, and agenthost's load facts and module data.
	for _, d := range []string{"wazero-v1-amd64-linux", "agenthost-load", "agenthost-data"} {
		sub := filepath.Join(dir, d)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		old, recent := filepath.Join(sub, "0a.123.tmp"), filepath.Join(sub, "0b.456.tmp")
		for _, p := range []string{old, recent} {
			if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		past := time.Now().Add(-2 * staleTemp)
		if err := os.Chtimes(old, past, past); err != nil {
			t.Fatal(err)
		}
		if _, err := ResolveCacheDir(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(old); !os.IsNotExist(err) {
			t.Errorf("stale %s still there (%v)", old, err)
		}
		if _, err := os.Stat(recent); err != nil {
			t.Errorf("recent %s removed: %v", recent, err)
		}
	}
}
