package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/config"
)

// TestRootExampleIsTheStarter keeps the repository's agents.hcl and its
// prompts identical to what 'agenthost init' writes, and valid.
func TestRootExampleIsTheStarter(t *testing.T) {
	for name, want := range config.Starter() {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatalf("%s: %v (the repository root must hold the starter files)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("../../%s differs from host/config/starter/%s: change both", name, name)
		}
	}
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		lookupEnv: func(string) (string, bool) { return "", false },
	}
	cache := t.TempDir()
	e.getenv = func(k string) string {
		if k == "AGENTHOST_CACHE_DIR" {
			return cache
		}
		return ""
	}
	if code := run(context.Background(), []string{"validate", "-c", "../../agents.hcl"}, e); code != exitOK {
		t.Fatalf("validate ../../agents.hcl: exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"agent build: model default, steps 25, budget 50, tokens 400000", "agent explore: model default, steps 10, budget unlimited"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("validate output lacks %q:\n%s", want, stdout.String())
		}
	}
}
