package npmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a TB that records a skip or failure and ends the goroutine,
// as testing.T does.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

func install(name string) (r *recorder, bin string) {
	r = &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		bin = Install(r, "the test", name, "left-pad@1.3.0")
	}()
	<-done
	return r, bin
}

// TestInstallOnlyWhenAsked: without AGENTHOST_NPM_TESTS=1 nothing is
// installed (npm is never run) and the test skips naming the variable; a
// cached installation is used whatever the variable says; with it, npm runs.
func TestInstallOnlyWhenAsked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in node and npm are shell scripts")
	}
	tools := t.TempDir()
	ran := filepath.Join(t.TempDir(), "npm-ran")
	// A stand-in npm that records that it ran and makes the .bin directory
	// under its --prefix (the fourth argument: install --no-audit --no-fund
	// --prefix DIR).
	npm := "#!/bin/sh\necho \"$@\" >>" + ran + "\nmkdir -p \"$5/node_modules/.bin\"\n"
	for name, body := range map[string]string{"node": "#!/bin/sh\nexit 0\n", "npm": npm} {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", tools+string(os.PathListSeparator)+"/usr/bin:/bin")
	cache := t.TempDir()
	t.Setenv("AGENTHOST_NPM_CACHE", cache)

	t.Setenv(AskVar, "")
	r, _ := install("pad")
	if !strings.Contains(r.skipped, AskVar+"=1") || r.failed != "" {
		t.Fatalf("not asked: skipped %q, failed %q; want a skip naming %s=1", r.skipped, r.failed, AskVar)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("npm ran although nobody asked for installs")
	}

	t.Setenv(AskVar, "1")
	r, bin := install("pad")
	if r.skipped != "" || r.failed != "" {
		t.Fatalf("asked: skipped %q, failed %q", r.skipped, r.failed)
	}
	if b, err := os.ReadFile(ran); err != nil || !strings.Contains(string(b), "left-pad@1.3.0") {
		t.Fatalf("npm did not install left-pad when asked: %q, %v", b, err)
	}
	if want := filepath.Join(cache, "pad", "node_modules", ".bin"); bin != want {
		t.Fatalf("bin = %q, want %q", bin, want)
	}

	// Installed once, it is used without the variable and without npm.
	if err := os.Remove(ran); err != nil {
		t.Fatal(err)
	}
	t.Setenv(AskVar, "")
	if r, bin2 := install("pad"); r.skipped != "" || bin2 != bin {
		t.Fatalf("cached: skipped %q, bin %q; want %q", r.skipped, bin2, bin)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("npm ran again for a cached installation")
	}
}
