package scenario

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// write makes the files of files (name → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/run_two.txtar":   "",
		"a/run_one.txtar":   "",
		"a/notes.txt":       "",
		"a/sub/deep.txtar":  "",
		"b/named.txtar":     "",
		"b/also_run.txtar":  "",
		"c/not_txtar.other": "",
	})
	a, named := filepath.Join(dir, "a"), filepath.Join(dir, "b", "named.txtar")
	for _, tc := range []struct {
		name  string
		paths []string
		match string
		want  []string
	}{
		{"directory", []string{a}, "", []string{filepath.Join(a, "run_one.txtar"), filepath.Join(a, "run_two.txtar")}},
		{"file and directory", []string{named, a}, "", []string{filepath.Join(a, "run_one.txtar"), filepath.Join(a, "run_two.txtar"), named}},
		{"match", []string{a, named}, "one", []string{filepath.Join(a, "run_one.txtar")}},
		{"no match", []string{a}, "zzz", nil},
		{"no txtar", []string{filepath.Join(dir, "c")}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find(tc.paths, tc.match)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Find(%q, %q) (-want +got):\n%s", tc.paths, tc.match, d)
			}
		})
	}
	if _, err := Find([]string{filepath.Join(dir, "missing")}, ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Find of a missing path: %v, want a not-exist error", err)
	}
}

// TestRun runs scenarios that pass, fail and skip: each is reported and
// counted, and a failure does not stop the others.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pass.txtar": "# Passes.\nmkdir made\nexists made\n",
		"fail.txtar": "# Fails on its second command.\nmkdir made\nexists missing\n",
		"skip.txtar": "# Skips itself.\nskip 'not today'\nexists missing\n",
	})
	files, err := Find([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sum, err := Run(context.Background(), Options{Files: files, CacheDir: t.TempDir(), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Summary{Passed: 1, Failed: 1, Skipped: 1}, sum); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if got, want := sum.String(), "1 passed, 1 failed, 1 skipped"; got != want {
		t.Errorf("summary line %q, want %q", got, want)
	}
	for _, want := range []string{"ok   pass\n", "FAIL fail\n", "    > exists missing\n", "SKIP skip: not today\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q; it is:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "> mkdir made"); n != 1 {
		t.Errorf("%d logs with '> mkdir made', want 1 (the failing scenario's; without Verbose a passing one's is not printed):\n%s", n, out.String())
	}
}

// TestRunEnvironment: a scenario gets the compilation cache, the extra
// environment, its own HOME and the agenthost executable first on PATH;
// the private temporary directory holding the link is gone afterwards.
func TestRunEnvironment(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true command")
	}
	dir, cache := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{
		"env.txtar": "# The environment of a scenario.\n" +
			"exec agenthost\n" +
			"cmpenv want.txt got.txt\n" +
			"mkdir $HOME/x\n" +
			"exists $WORK/.home/x\n" +
			"-- want.txt --\n" + cache + " extra-value\n" +
			"-- got.txt --\n$AGENTHOST_CACHE_DIR $EXTRA\n",
	})
	var out strings.Builder
	sum, err := Run(context.Background(), Options{
		Files:     []string{filepath.Join(dir, "env.txtar")},
		CacheDir:  cache,
		Agenthost: truePath,
		Env:       map[string]string{"EXTRA": "extra-value"},
		Verbose:   true,
		Stdout:    &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed != 1 {
		t.Fatalf("summary %v, want 1 passed; report:\n%s", sum, out.String())
	}
	if privTemp.dir != "" {
		t.Errorf("private temporary directory %s left after Run", privTemp.dir)
	}
}

// TestRunInterrupted: Run returns as soon as its context is done, though
// the scenario running then would go on for 30 seconds, and reports
// nothing more.
func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a_quick.txtar": "# Passes at once.\nmkdir made\n",
		"b_hangs.txtar": "# Waits for a file that never comes.\nwaitmatch never.log x\n",
	})
	files, err := Find([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(ctx, Options{Files: files, CacheDir: t.TempDir(), Stdout: pw})
		done <- result{sum, err}
	}()
	// The first scenario's report means the second one is under way.
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || line != "ok   a_quick\n" {
		t.Fatalf("first report %q (%v), want ok   a_quick", line, err)
	}
	start := time.Now()
	cancel()
	r := <-done
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("Run after cancel: %v, want context.Canceled", r.err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run returned %v after cancel; it should not wait for the scenario", d)
	}
}
