package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host"
)

// cancelOn is a log writer that cancels a context when a line containing
// its text is written.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.text)) {
		c.once.Do(c.cancel)
	}
	return len(p), nil
}

// TestLoadHostInterrupted: a signal (the context cancelled) while a plugin
// is being compiled ends the load with exit 130 and a message, without
// waiting for the compilation, which wazero cannot stop.
func TestLoadHostInterrupted(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agents.hcl")
	if err := os.WriteFile(cfg, []byte(`
provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
plugin "core" {
  source = "builtin:core"
}
agent "a" {
  tools = ["read_file"]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := zerolog.New(&cancelOn{text: "loading plugin", cancel: cancel}).Level(zerolog.DebugLevel)
	ctx = log.WithContext(ctx)
	var stderr bytes.Buffer
	e := &env{stderr: &stderr, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }}
	// In memory only: the compilation that goes on after the test leaves
	// nothing on disk.
	h, code := loadHost(ctx, cfg, host.Options{NoCache: true}, e)
	if h != nil || code != exitAborted {
		t.Fatalf("loadHost: host %t, exit %d; want no host, exit %d", h != nil, code, exitAborted)
	}
	if got := stderr.String(); !strings.Contains(got, "interrupted while loading the config and plugins; nothing ran") {
		t.Errorf("stderr %q", got)
	}
}
