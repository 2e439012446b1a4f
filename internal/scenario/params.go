package scenario

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Params are the testscript parameters of a scenario, shared by Run and by
// the project's own script tests (cmd/agenthost's TestScript): strict
// parsing, the hermetic environment of Setup, and the commands of Cmds.
//
// cacheDir is the compilation cache every scenario shares (compiling the
// core plugin cold takes a second or more, from the cache milliseconds): a
// private directory (host.ResolveCacheDir), never one in a shared
// temporary directory. env is added to every scenario's environment.
func Params(cacheDir string, env map[string]string) testscript.Params {
	return testscript.Params{
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(e *testscript.Env) error {
			if err := Setup(e); err != nil {
				return err
			}
			e.Setenv("AGENTHOST_CACHE_DIR", cacheDir)
			for k, v := range env {
				e.Setenv(k, v)
			}
			return nil
		},
		Cmds:      Cmds(),
		Condition: Condition,
	}
}

// Setup makes a scenario hermetic: its own HOME (and no XDG_CACHE_HOME:
// the user cache directory is under it), no provider settings from the
// environment, no colour, UTC. It sets $REPO and passes $AGENTHOST_UPDATE
// on (see below), and the Go caches buildwasm needs.
func Setup(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("XDG_CACHE_HOME", "")
	env.Setenv("NO_COLOR", "1")
	env.Setenv("TZ", "UTC")
	for k, v := range goEnv() {
		env.Setenv(k, v)
	}
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTHOST_CONFIG", "AGENTHOST_MODEL", "AGENTHOST_DATA_DIR", "XDG_STATE_HOME", "BROWSER"} {
		env.Setenv(k, "")
	}
	// $REPO is the agenthost checkout the tests run in (empty outside one),
	// so a script can use the project's own examples; $AGENTHOST_UPDATE is
	// passed on so such a script can rewrite a file there instead of
	// failing (quickstart_record.txtar re-records the quickstart cassette).
	env.Setenv("REPO", repoRoot())
	env.Setenv("AGENTHOST_UPDATE", os.Getenv("AGENTHOST_UPDATE"))
	return nil
}

// repoRoot is the nearest directory at or above the working directory
// whose go.mod declares the agenthost module, or "".
var repoRoot = sync.OnceValue(func() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/agenthost/agenthost\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
})

// goEnv is what buildwasm's go command needs of the real environment: its
// caches (GOCACHE, GOMODCACHE, GOPATH), not $HOME's. It is empty without a
// Go toolchain (buildwasm then says so), and asked of 'go env' once per
// process.
var goEnv = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	keys := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, keys...)...).Output()
	if err != nil {
		return m
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range keys {
		if i < len(lines) {
			if v := strings.TrimSpace(lines[i]); v != "" {
				m[k] = v
			}
		}
	}
	return m
})
