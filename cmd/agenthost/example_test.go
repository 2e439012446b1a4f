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

// TestStarterValidates validates what 'agenthost init' writes, and the
// limits validate prints for its agents.
func TestStarterValidates(t *testing.T) {
	dir := t.TempDir()
	for name, b := range config.Starter() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "workspace"), 0o755); err != nil { // as init makes it
		t.Fatal(err)
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
	if code := run(context.Background(), []string{"validate", "-c", filepath.Join(dir, "agents.hcl")}, e); code != exitOK {
		t.Fatalf("validate the starter: exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"agent build: model default, steps 25, budget 50, tokens 400000", "agent explore: model default, steps 10, budget unlimited"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("validate output lacks %q:\n%s", want, stdout.String())
		}
	}
}
