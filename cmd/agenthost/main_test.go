package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agenthost": func() { os.Exit(Main()) },
	})
}

// TestScript runs testdata/script/*.txtar against the real agenthost
// command, run as a separate process from $PATH.
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams("../../testdata/script"))
}

func scriptParams(dir string) testscript.Params {
	p := scenarioParams(nil)
	p.Dir = dir
	p.UpdateScripts = os.Getenv("AGENTHOST_UPDATE") != ""
	return p
}

// scriptSetup makes a script hermetic: its own HOME, no provider settings
// from the environment, no colour, UTC.
