package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/mcptest"
	"github.com/agenthost/agenthost/internal/scenario"
)

// TestMain makes this test binary the programs the scripts run: agenthost
// itself, and ptyrun, a test-only program that 'agenthost test' does not
// ship.
func TestMain(m *testing.M) {
	testscript.Main(cleanup{m}, map[string]func(){
		"agenthost": func() { os.Exit(Main()) },
		// ptyrun CMD ARGS... runs CMD with stdout and stderr on terminals
		// (pty_linux_test.go).
		"ptyrun": func() { os.Exit(ptyRun()) },
		// ptytype SCRIPT CMD ARGS... types at CMD's terminal and waits for
		// its output (ptytype_linux_test.go).
		"ptytype": func() { os.Exit(ptyType()) },
		// mcpclient OP... -- SERVER... is an MCP client made with the
		// official Go SDK (mcpclient_test.go).
		"mcpclient": func() { os.Exit(mcpClientMain()) },
		// mcptestserver MODE is the MCP server of the tests, made with the
		// official Go SDK (package internal/mcptest).
		"mcptestserver": func() { os.Exit(mcptest.Serve(os.Args[1])) },
		// exitstatus CMD ARGS... prints CMD's exit status, passing SIGINT
		// on to it (exitstatus_test.go).
		"exitstatus": func() { os.Exit(exitStatus()) },
		// peakrss MAX_MIB CMD ARGS... runs CMD and prints (and bounds) its
		// peak resident memory (peakrss_test.go).
		"peakrss": func() { os.Exit(peakRSS()) },
		// mcpconformance URL is the client command of the MCP
		// conformance suite; browserget URL the browser of logins
		// (mcpconformance_test.go).
		"mcpconformance": func() { os.Exit(mcpConformance()) },
		"browserget":     func() { os.Exit(browserGet()) },
	})
}

// cleanup removes the test process's private temporary directory (its wasm
// builds, and the compilation cache when it had to be there) after the
// tests. It also sets the umask of the tests (not of the programs the
// scripts run as commands, which do not get here) to 022, so that the
// files a script's archive makes have the same modes for every developer:
// agenthost refuses a data_dir that group or others may write, which a
// umask of 002 would make of a seeded .agenthost.
type cleanup struct{ m *testing.M }

func (c cleanup) Run() int {
	setTestUmask()
	defer scenario.RemovePrivateTemp()
	return c.m.Run()
}

// TestScript runs testdata/script/*.txtar against the real agenthost
// command, run as a separate process from $PATH, with the commands and the
// environment of an 'agenthost test' scenario (scenario.Params).
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams(t, "../../testdata/script"))
}

// scriptParams share one compilation cache between every script: the one
// agenthost itself would use ($AGENTHOST_CACHE_DIR, else the user's cache
// directory), so it stays warm from one 'go test' to the next. Each script
// has its own HOME, so without this its cache would be cold. When that
// cache cannot be used (no home directory, or not private), a directory in
// the process's private temporary directory serves instead.
func scriptParams(t *testing.T, dir string) testscript.Params {
	cache, err := host.ResolveCacheDir(os.Getenv("AGENTHOST_CACHE_DIR"))
	if err != nil {
		t.Logf("compilation cache for the scripts: %v; using a private temporary one", err)
		priv, err := scenario.PrivateTemp()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(priv, "wazero")
	}
	p := scenario.Params(cache, map[string]string{"AGENTHOST_AS_DIR": os.Getenv("AGENTHOST_AS_DIR")})
	p.Condition = toolchainCondition
	p.Cmds["rustwasm"] = cmdRustWasm
	p.Cmds["otlprecv"] = cmdOTLPRecv
	p.Cmds["mcphttp"] = cmdMCPHTTP
	p.Cmds["mcpoauth"] = cmdMCPOAuth
	p.Cmds["component"] = cmdComponent
	p.Cmds["webserver"] = cmdWebServer
	p.Cmds["registry"] = cmdRegistry
	p.Dir = dir
	p.UpdateScripts = os.Getenv("AGENTHOST_UPDATE") != ""
	return p
}

// cmdMCPHTTP serves the test MCP server (internal/mcptest) over streamable
// HTTP on loopback, in the test process, for the script's life:
//
//	mcphttp [-token-env VAR] [-record FILE] [-json] [-redirector]
//
// It sets MCPHTTP_URL to http://127.0.0.1:PORT/mcp and MCPHTTP_ADDR to
// 127.0.0.1:PORT. With -token-env, requests without "Authorization: Bearer
// $VAR" are answered 401. -record is the file the block and gather tools
// write what they saw to. With -json, calls are answered with one JSON
// body instead of an event stream. With -redirector, a second server, on
// another port (another origin), answers every request with a 307 to the
// first; MCPHTTP_REDIRECT_URL is its URL.
func cmdMCPHTTP(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("mcphttp", flag.ContinueOnError)
	tokenEnv := fs.String("token-env", "", "")
	record := fs.String("record", "", "")
	jsonBody := fs.Bool("json", false, "")
	redirector := fs.Bool("redirector", false, "")
	if neg || fs.Parse(args) != nil || fs.NArg() != 0 {
		ts.Fatalf("usage: mcphttp [-token-env VAR] [-record FILE] [-json] [-redirector]")
	}
	token := ""
	if *tokenEnv != "" {
		if token = ts.Getenv(*tokenEnv); token == "" {
			ts.Fatalf("mcphttp: $%s is empty", *tokenEnv)
		}
	}
	rec := ""
	if *record != "" {
		rec = ts.MkAbs(*record)
	}
	s, err := mcptest.StartHTTPWith(mcptest.HTTPOptions{Token: token, Record: rec, JSON: *jsonBody})
	ts.Check(err)
	ts.Defer(func() { s.Close() })
	ts.Setenv("MCPHTTP_URL", s.URL)
	u, err := url.Parse(s.URL)
	ts.Check(err)
	ts.Setenv("MCPHTTP_ADDR", u.Host)
	if *redirector {
		r := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, s.URL, http.StatusTemporaryRedirect)
		}))
		ts.Defer(r.Close)
		ts.Setenv("MCPHTTP_REDIRECT_URL", r.URL+"/mcp")
	}
}

// cmdMCPOAuth serves the test MCP server behind OAuth, with its
// authorization server (internal/mcptest.StartOAuth), in the test process,
// for the script's life:
//
//	mcpoauth [-record FILE] [-expires-in SECONDS] [-client ID:SECRET] [-client-key ID:FILE] [-hostile-errors json|text]
//
// It sets MCPOAUTH_URL to http://127.0.0.1:PORT/mcp. -record is the file of
// what the servers saw (a line per token request: "token GRANT
// resource=RESOURCE"); tokens expire after -expires-in seconds; -client is
// the client the client credentials grant accepts; -client-key makes it
// client ID authenticated with private_key_jwt, by a new EC P-256 key whose
// private half (PEM) is written to FILE; -hostile-errors makes the token
// endpoint refuse every request with 1 MiB of terminal escapes.
func cmdMCPOAuth(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("mcpoauth", flag.ContinueOnError)
	record := fs.String("record", "", "")
	expires := fs.Int("expires-in", 0, "")
	client := fs.String("client", "", "")
	clientKey := fs.String("client-key", "", "")
	hostile := fs.String("hostile-errors", "", "")
	if neg || fs.Parse(args) != nil || fs.NArg() != 0 {
		ts.Fatalf("usage: mcpoauth [-record FILE] [-expires-in SECONDS] [-client ID:SECRET] [-client-key ID:FILE] [-hostile-errors json|text]")
	}
	o := mcptest.OAuthOptions{ExpiresIn: *expires, HostileErrors: *hostile}
	if *record != "" {
		o.Record = ts.MkAbs(*record)
	}
	if *client != "" {
		id, secret, _ := strings.Cut(*client, ":")
		o.ClientID, o.ClientSecret = id, secret
	}
	if *clientKey != "" {
		id, file, _ := strings.Cut(*clientKey, ":")
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ts.Check(err)
		der, err := x509.MarshalPKCS8PrivateKey(key)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(file), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
		o.ClientID, o.ClientKey = id, &key.PublicKey
	}
	s, err := mcptest.StartOAuth(o)
	ts.Check(err)
	ts.Defer(func() { s.Close() })
	ts.Setenv("MCPOAUTH_URL", s.URL)
}
