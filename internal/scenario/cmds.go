package scenario

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
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/wasmbuild"
)

// Cmds are the commands a scenario has beside testscript's own: fakemodel,
// status, buildwasm, waitmatch and extismwasm (extism.go). Test-only
// programs (the script tests' ptyrun) are not among them: they are
// registered by the tests that need them.
func Cmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"fakemodel":  cmdFakeModel,
		"status":     cmdStatus,
		"buildwasm":  cmdBuildWasm,
		"waitmatch":  cmdWaitMatch,
		"extismwasm": cmdExtismWasm,
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
//	fakemodel models [-status N] ID...  what GET /v1/models answers (an HTTP error with -status)
//	fakemodel key KEY        answer 401 to requests without "Bearer KEY"
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
	case "models":
		status := 0
		ids := args[1:]
		if len(ids) >= 2 && ids[0] == "-status" {
			n, err := strconv.Atoi(ids[1])
			ts.Check(err)
			status, ids = n, ids[2:]
		}
		srv.SetModels(status, ids...)
	case "key":
		if len(args) != 2 {
			ts.Fatalf("usage: fakemodel key KEY")
		}
		srv.RequireKey(args[1])
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
//	buildwasm [-reactor] DIR OUT.wasm
//
// -reactor builds a WASI reactor (-buildmode=c-shared: _initialize, no
// _start) instead of a command. Builds are cached by the content of DIR
// and the flags in the private temporary directory, for the life of the
// process.
func cmdBuildWasm(ts *testscript.TestScript, neg bool, args []string) {
	reactor := len(args) > 0 && args[0] == "-reactor"
	if reactor {
		args = args[1:]
	}
	if len(args) != 2 || neg {
		ts.Fatalf("usage: buildwasm [-reactor] DIR OUT.wasm")
	}
	dir, out := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	key, err := hashDir(dir)
	ts.Check(err)
	if reactor {
		key += "-reactor"
	}
	priv, err := PrivateTemp()
	ts.Check(err)
	cached := filepath.Join(priv, "buildwasm", key+".wasm")
	if _, err := os.Stat(cached); err != nil {
		build := wasmbuild.Build
		if reactor {
			build = wasmbuild.BuildReactor
		}
		if err := build(cached, dir); err != nil {
			ts.Fatalf("buildwasm %s: %v", args[0], err)
		}
	}
	b, err := os.ReadFile(cached)
	ts.Check(err)
	ts.Check(os.WriteFile(out, b, 0o644))
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
