package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agenthost": func() { os.Exit(Main()) },
		// ptyrun CMD ARGS... runs CMD with stdout and stderr on terminals
		// (pty_linux_test.go).
		"ptyrun": func() { os.Exit(ptyRun()) },
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
