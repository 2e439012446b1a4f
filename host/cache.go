package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenthost/agenthost/internal/private"
)

// The compilation cache holds native code that wazero compiled from the
// plugins and that this process later maps and runs. Whoever can write
// there can run code as the user of agenthost, so the cache lives in the
// user's own cache directory, is created private (0700), and is refused
// when it is not private. See ResolveCacheDir.

// DefaultCacheDir is the compilation cache used when no other is given:
// agenthost/wazero under the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
// %LocalAppData% on Windows). Never a shared temporary directory.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the compilation cache (%v): set HOME, or set AGENTHOST_CACHE_DIR to a private directory", err)
	}
	return filepath.Join(base, "agenthost", "wazero"), nil
}

// ResolveCacheDir returns the absolute compilation cache directory for
// dir, or for DefaultCacheDir() when dir is "". It creates the directory
// (mode 0700) when it is missing, then refuses it, with an error that says
// what is wrong and how to fix it, when it (or, for the default, the
// agenthost directory above it; or a wazero-* entry inside it) is owned by
// another user or writable by group or others. The ownership and mode
// checks are skipped on Windows, where a user's cache directory is private
// by its access control list.
func ResolveCacheDir(dir string) (string, error) {
	check := []string{}
	if dir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return "", err
		}
		dir = d
		check = append(check, filepath.Dir(d)) // .../agenthost
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("compilation cache %s: %w", dir, err)
	}
	check = append(check, abs)
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("create the compilation cache %s: %w (set AGENTHOST_CACHE_DIR to a private directory you can write)", abs, err)
	}
	for _, d := range check {
		if err := checkPrivate(d, true); err != nil {
			return "", err
		}
	}
	// The directories wazero keeps its entries in, and the entries: one
	// planted while the cache was open to others is refused too.
	subs, _ := filepath.Glob(filepath.Join(abs, "wazero-*"))
	for _, s := range subs {
		if err := checkPrivate(s, false); err != nil {
			return "", err
		}
		ents, err := os.ReadDir(s)
		if err != nil {
			return "", fmt.Errorf("compilation cache %s: %w", s, err)
		}
		for _, e := range ents {
			p := filepath.Join(s, e.Name())
			if err := checkPrivate(p, false); err != nil {
				return "", err
			}
			removeStaleTemp(p)
		}
	}
	// agenthost's own entries (host/plugin: load facts, module data, what
	// was fetched from registries) are checked by their readers; only the
	// temporary files of interrupted writes are removed here.
	for _, d := range []string{"agenthost-load", "agenthost-data", "agenthost-oci/blobs/sha256", "agenthost-oci/tags"} {
		ents, _ := os.ReadDir(filepath.Join(abs, d))
		for _, e := range ents {
			removeStaleTemp(filepath.Join(abs, d, e.Name()))
		}
	}
	return abs, nil
}

// staleTemp is the age after which a temporary file in the cache is
// garbage: wazero (and agenthost, for its own entries) writes an entry to
// NAME.*.tmp and renames it when complete, so a .tmp file stays only when
// a process was stopped while writing (agenthost exits without waiting for
// a compilation it was interrupted in). No write takes this long.
const staleTemp = time.Hour

func removeStaleTemp(path string) {
	if !strings.HasSuffix(path, ".tmp") {
		return
	}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleTemp {
		os.Remove(path)
	}
}

// checkPrivate refuses path when another user owns it or group or others
// may write it (on Unix; elsewhere access control lists decide, see
// private.Check). A directory must be a directory when dir is true.
// Symbolic links are followed: what counts is where the files are written.
func checkPrivate(path string, dir bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("compilation cache: %w", err)
	}
	if dir && !st.IsDir() {
		return fmt.Errorf("compilation cache %s is not a directory: set AGENTHOST_CACHE_DIR to a private directory", path)
	}
	if p := private.Check(st); p != nil {
		return unsafeCache(path, p.What, p.Fix)
	}
	return nil
}

// errNotPrivate marks a cache path refused by checkPrivate.
var errNotPrivate = errors.New("compilation cache is not private")

// unsafeCache words checkPrivate's refusal: what is wrong, why it matters,
// how to fix it.
func unsafeCache(path, what, chfix string) error {
	return fmt.Errorf("%w: %s %s; agenthost runs the native code cached there, so another user could run code as you. "+
		"Fix: remove %s (it is only a cache; agenthost makes it again, private), or %s if nobody else has written there, "+
		"or set AGENTHOST_CACHE_DIR to a private directory", errNotPrivate, path, what, path, chfix)
}

// cacheDir is the compilation cache o asks for: "" (in memory) when
// NoCache, else ResolveCacheDir(o.CacheDir).
func (o Options) cacheDir() (string, error) {
	if o.NoCache {
		return "", nil
	}
	return ResolveCacheDir(o.CacheDir)
}
