package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(cleanup{m}, map[string]func(){
		"agenthost": func() { os.Exit(Main()) },
	})
}

// cleanup removes the test process's private temporary directory (its
// compilation cache and wasm builds) after the tests.
type cleanup struct{ m *testing.M }

func (c cleanup) Run() int {
	defer removePrivateTemp()
	return c.m.Run()
}

// TestScript runs testdata/script/*.txtar against the real agenthost
// command, run as a separate process from $PATH.
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams(t, "../../testdata/script"))
}

// scriptParams share one compilation cache between every script of the
// test process: $AGENTHOST_CACHE_DIR when set, else a directory in the
// process's private temporary directory. Each script has its own HOME, so
// the user cache directory would be cold for each.
func scriptParams(t *testing.T, dir string) testscript.Params {
	cache := os.Getenv("AGENTHOST_CACHE_DIR")
	if cache == "" {
		priv, err := privateTemp()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(priv, "wazero")
	}
	p := scenarioParams(cache, nil)
	p.Dir = dir
	p.UpdateScripts = os.Getenv("AGENTHOST_UPDATE") != ""
	return p
}
