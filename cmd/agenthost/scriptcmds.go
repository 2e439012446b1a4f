package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

// scenarioParams are the testscript parameters shared by the project's own
// script tests and by 'agenthost test'. cacheDir is the compilation cache
// every scenario shares (compiling the core plugin cold takes a second or
// more, from the cache milliseconds): a private directory, never one in a
// shared temporary directory. extra is added to the environment.
func scenarioParams(cacheDir string, extra map[string]string) testscript.Params {
	return testscript.Params{
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			if err := scriptSetup(env); err != nil {
				return err
			}
			env.Setenv("AGENTHOST_CACHE_DIR", cacheDir)
			for k, v := range extra {
				env.Setenv(k, v)
			}
			return nil
		},
		Cmds: scriptCmds(),
	}
}

// scriptSetup makes a script hermetic: its own HOME (and no
// XDG_CACHE_HOME: the user cache directory is under it), no provider
// settings from the environment, no colour, UTC.
func scriptSetup(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("XDG_CACHE_HOME", "")
	env.Setenv("NO_COLOR", "1")
	env.Setenv("TZ", "UTC")
	for k, v := range scriptGoEnv() {
		env.Setenv(k, v)
	}
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTHOST_CONFIG", "AGENTHOST_MODEL", "AGENTHOST_DATA_DIR"} {
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

// scriptGoEnv is what buildwasm's go command needs of the real
// environment: its caches, not $HOME's.
func scriptGoEnv() map[string]string {
	m := map[string]string{}
	for k, v := range goEnvs() {
		if v != "" {
			m[k] = v
		}
	}
	return m
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

func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"fakemodel": cmdFakeModel,
		"status":    cmdStatus,
		"buildwasm": cmdBuildWasm,
		"waitmatch": cmdWaitMatch,
	}
}

// cmdFakeModel drives the fake OpenAI-compatible server:
//
//	fakemodel start SCRIPT   start serving SCRIPT's replies; sets OPENAI_BASE_URL
//	                         (http://HOST:PORT/v1) and FAKEMODEL_ADDR (HOST:PORT)
//	fakemodel requests [json] print what the host sent (a line per request, or JSON)
//	fakemodel urls           print "#N METHOD URI" per request (path and query sent)
//	fakemodel count N        assert exactly N requests were received
//	fakemodel wait N         block until N requests have arrived (at most 30s)
//	fakemodel release        let the held replies ("hold": true) go on
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: fakemodel start SCRIPT | requests [json] | urls | count N | wait N | release")
	}
	var srv *fakemodel.Server
	switch args[0] {
	case "start":
		if len(args) != 2 || neg {
			ts.Fatalf("usage: fakemodel start SCRIPT")
		}
		replies, err := fakemodel.ParseScript([]byte(ts.ReadFile(args[1])))
		ts.Check(err)
		s, err := fakemodel.Start(replies)
		ts.Check(err)
		servers.Store(ts, s)
		ts.Defer(func() { s.Close(); servers.Delete(ts) })
		ts.Setenv("OPENAI_BASE_URL", s.URL())
		ts.Setenv("FAKEMODEL_ADDR", s.Addr())
		return
	}
	if v, ok := servers.Load(ts); ok {
		srv = v.(*fakemodel.Server)
	}
	if srv == nil {
		ts.Fatalf("fakemodel %s: no server; run 'fakemodel start SCRIPT' first", args[0])
	}
	switch args[0] {
	case "requests":
		mode := "summary"
		if len(args) > 1 {
			mode = args[1]
		}
		fmt.Fprint(ts.Stdout(), srv.Format(mode))
	case "urls":
		for i, u := range srv.URLs() {
			fmt.Fprintf(ts.Stdout(), "#%d %s\n", i+1, u)
		}
	case "count":
		if len(args) != 2 {
			ts.Fatalf("usage: fakemodel count N")
		}
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		got := len(srv.Requests())
		if (got == want) == neg {
			ts.Fatalf("fakemodel received %d requests, want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: fakemodel wait N")
		}
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.WaitRequests(ctx, want); err != nil {
			ts.Fatalf("fakemodel: %d requests after 30s, want %d", len(srv.Requests()), want)
		}
	case "release":
		if len(args) != 1 || neg {
			ts.Fatalf("usage: fakemodel release")
		}
		srv.Release()
	default:
		ts.Fatalf("fakemodel: unknown subcommand %q", args[0])
	}
}

var servers sync.Map // *testscript.TestScript → *fakemodel.Server

// cmdStatus runs a command and asserts its exact exit status:
//
//	status 2 agenthost validate
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: status CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not an exit code", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdWaitMatch blocks until a file (the log of a command run in the
// background) matches a regular expression, for at most 30 seconds:
//
//	waitmatch stderr.log '"message":"loading plugin'
//
// It looks again each time the file may have grown (every 10 ms): the
// file's content is what it waits for, never a fixed delay.
func cmdWaitMatch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: waitmatch FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(path)
		if err == nil && re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitmatch: %s does not match %q after 30s; it holds:\n%s", args[0], args[1], b)
		}
		<-tick.C
	}
}

// cmdBuildWasm builds a Go main package to a wasip1 module:
//
//	buildwasm DIR OUT.wasm
//
// Builds are cached by the content of DIR for the life of the test binary.
func cmdBuildWasm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: buildwasm DIR OUT.wasm")
	}
	dir, out := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	key, err := hashDir(dir)
	ts.Check(err)
	priv, err := privateTemp()
	ts.Check(err)
	cached := filepath.Join(priv, "buildwasm", key+".wasm")
	if _, err := os.Stat(cached); err != nil {
		cmd := exec.Command("go", "build", "-trimpath", "-o", cached, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("buildwasm %s: %v\n%s", args[0], err, b)
		}
	}
	b, err := os.ReadFile(cached)
	ts.Check(err)
	ts.Check(os.WriteFile(out, b, 0o644))
}

// privTemp is this process's private temporary directory for running
// scenarios: made by os.MkdirTemp (mode 0700, a fresh name, so no other
// user can have planted anything in it), removed by removePrivateTemp. It
// holds buildwasm's builds (shared by the scenarios of the process) and,
// for 'agenthost test', the agenthost link put on PATH.
var privTemp struct {
	mu  sync.Mutex
	dir string
}

// privateTemp returns the process's private temporary directory, making it
// on first use.
func privateTemp() (string, error) {
	privTemp.mu.Lock()
	defer privTemp.mu.Unlock()
	if privTemp.dir == "" {
		d, err := os.MkdirTemp("", "agenthost-test-")
		if err != nil {
			return "", fmt.Errorf("private temporary directory: %w", err)
		}
		privTemp.dir = d
	}
	for _, sub := range []string{"buildwasm", "bin"} {
		if err := os.MkdirAll(filepath.Join(privTemp.dir, sub), 0o700); err != nil {
			return "", err
		}
	}
	return privTemp.dir, nil
}

// removePrivateTemp removes the private temporary directory, if made.
func removePrivateTemp() {
	privTemp.mu.Lock()
	defer privTemp.mu.Unlock()
	if privTemp.dir != "" {
		os.RemoveAll(privTemp.dir)
		privTemp.dir = ""
	}
}

func hashDir(dir string) (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

var goEnvs = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return m // no Go toolchain: buildwasm will say so
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(lines) {
			m[k] = strings.TrimSpace(lines[i])
		}
	}
	return m
})
