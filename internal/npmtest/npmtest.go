// Package npmtest installs npm packages for tests that run real Node
// programs (the MCP Inspector, the reference MCP servers, the conformance
// suite, ComponentizeJS): once into a cache directory, skipping the test with
// a message when Node or npm is missing, with -short, or when npm cannot
// install.
//
// A plain `go test ./...` installs nothing from npm: the installs come to
// several hundred megabytes and minutes, which a newcomer's first run should
// not pay unasked. A test whose packages are not in the cache yet skips,
// naming AGENTHOST_NPM_TESTS=1, which .ci/run sets; once installed, later
// runs use the cache whatever the variable says.
package npmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// AskVar is the environment variable that lets tests install npm packages:
// "1" allows it; anything else skips a test whose packages are not cached.
const AskVar = "AGENTHOST_NPM_TESTS"

// TB is what Install needs of a test: testing.TB has it, and so can a
// script test's command.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatal(args ...any)
}

// CacheRoot is $AGENTHOST_NPM_CACHE, else the user's cache directory's
// agenthost-tests/npm, where npm packages and what they build are kept;
// what names those in the skip message when there is no cache directory.
func CacheRoot(t TB, what string) string {
	t.Helper()
	if root := os.Getenv("AGENTHOST_NPM_CACHE"); root != "" {
		return root
	}
	c, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for %s (%v): set AGENTHOST_NPM_CACHE", what, err)
	}
	return filepath.Join(c, "agenthost-tests", "npm")
}

// Install installs pkgs (npm package specs, versions pinned) into
// $AGENTHOST_NPM_CACHE/name, else the user's cache directory's
// agenthost-tests/npm/name, unless already there, and returns the
// installation's node_modules/.bin directory. why says what the test
// needs the packages for, in skip messages.
func Install(t TB, why, name string, pkgs ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s installs and runs Node programs", why)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %s needs Node and npm (skipped)", tool, why)
		}
	}
	root := CacheRoot(t, "npm packages")
	dir := filepath.Join(root, name)
	bin := filepath.Join(dir, "node_modules", ".bin")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if os.Getenv(AskVar) != "1" {
		t.Skipf("%s installs %s from npm (not in %s yet): set %s=1 to install them (once; .ci/run does)",
			why, strings.Join(pkgs, " "), root, AskVar)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside, then renamed into place: an install stopped midway
	// is never taken for a whole one.
	tmp, err := os.MkdirTemp(root, name+"-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--prefix", tmp}, pkgs...)
	if out, err := exec.CommandContext(ctx, "npm", args...).CombinedOutput(); err != nil {
		t.Skipf("cannot install %s with npm (skipped): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr == nil { // another test process installed it first
			return bin
		}
		t.Fatal(err)
	}
	return bin
}
