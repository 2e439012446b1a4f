package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedDocsCurrent checks that the man pages in docs/man and the
// completion scripts in docs/completion are what the command line makes
// now: after a change to a command or a flag, run go generate
// ./cmd/agenthost.
func TestGeneratedDocsCurrent(t *testing.T) {
	const hint = "docs out of date: run 'go generate ./cmd/agenthost' and commit the result"
	dir := t.TempDir()
	e := &env{stdin: bytes.NewReader(nil), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: os.Getenv, lookupEnv: os.LookupEnv}
	// The docs are made by the default build; one built with -tags
	// notemporal has other worker and runs commands (notemporal.go).
	if w, _, err := (&cli{ctx: context.Background(), e: e}).tree().Find([]string{"worker"}); err == nil && strings.HasSuffix(w.Short, "(not in this build)") {
		t.Skip("built with -tags notemporal: the generated docs are the default build's")
	}
	if code := run(context.Background(), []string{"man", dir}, e); code != exitOK {
		t.Fatalf("man: exit %d: %s", code, e.stderr)
	}
	made, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	kept, _ := filepath.Glob("../../docs/man/*.1")
	if len(made) != len(kept) {
		t.Errorf("%d man pages made, %d in docs/man; %s", len(made), len(kept), hint)
	}
	for _, m := range made {
		want, _ := os.ReadFile(m)
		got, err := os.ReadFile(filepath.Join("../../docs/man", filepath.Base(m)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s differs; %s", filepath.Base(m), hint)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		e := &env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &bytes.Buffer{}, getenv: os.Getenv, lookupEnv: os.LookupEnv}
		if code := run(context.Background(), []string{"completion", sh}, e); code != exitOK {
			t.Fatalf("completion %s: exit %d", sh, code)
		}
		got, err := os.ReadFile("../../docs/completion/agenthost." + sh)
		if err != nil || !bytes.Equal(got, out.Bytes()) {
			t.Errorf("docs/completion/agenthost.%s differs; %s", sh, hint)
		}
	}
}
