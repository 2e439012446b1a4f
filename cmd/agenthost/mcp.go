package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/mcpserve"
)

const mcpUsage = `Usage:
  agenthost mcp serve [-c FILE] [-a AGENT] [--tools] [--agents]
                      [--http ADDR] [--token-env VAR] [--log-level L] [--log-file FILE]
`

// cmdMCP is `agenthost mcp`: only `serve` for now.
func cmdMCP(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(e.stdout, mcpUsage)
			return exitOK
		}
		fmt.Fprint(e.stderr, mcpUsage)
		return exitUsage
	}
	return cmdMCPServe(ctx, args[1:], e)
}

// cmdMCPServe serves plugin tools and agents over MCP: on stdin/stdout by
// default, over streamable HTTP with --http. Nothing but the protocol is
// written to stdout; logs go to stderr or --log-file.
func cmdMCPServe(ctx context.Context, args []string, e *env) int {
	fs := newFlags("mcp serve", e)
	cfgFlag := fs.String("c", "", "config `file` (default $AGENTHOST_CONFIG or ./agents.hcl)")
	agentFlag := fs.String("a", "", "serve only this `agent`'s tools (--tools) or this agent (--agents)")
	tools := fs.Bool("tools", false, "serve plugin tools (the default when --agents is not given)")
	agents := fs.Bool("agents", false, "serve agents as tools taking {\"prompt\": string}")
	httpAddr := fs.String("http", "", "serve streamable HTTP on this `address` (host:port) at /mcp instead of stdio")
	tokenEnv := fs.String("token-env", "", "with --http, require 'Authorization: Bearer TOKEN', TOKEN read from this environment `variable`")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn, error")
	logFile := fs.String("log-file", "", "append logs to this `file` instead of stderr")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		return usageErr(e, "mcp serve takes no arguments (got %q)", pos)
	}
	if !*tools && !*agents {
		*tools = true
	}
	var token string
	if *tokenEnv != "" {
		if *httpAddr == "" {
			return usageErr(e, "--token-env is for --http; stdio needs no token")
		}
		token = e.getenv(*tokenEnv)
		if token == "" {
			return usageErr(e, "--token-env %s: the variable is not set or empty; set it to the bearer token clients must send", *tokenEnv)
		}
	}
	if *httpAddr != "" {
		if err := checkListenAddr(*httpAddr, token != ""); err != nil {
			return usageErr(e, "--http %s: %v", *httpAddr, err)
		}
	}

	le := *e
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return usageErr(e, "--log-file: %v", err)
		}
		defer f.Close()
		le.stderr, le.stderrTTY = f, false
	}
	logger, code := newLogger(*logLevel, &le, false)
	if code != exitOK {
		return code
	}
	ctx = logger.WithContext(ctx)

	h, code := loadHost(ctx, configPath(*cfgFlag, e), hostOptions(e), e)
	if code != exitOK {
		return code
	}
	defer h.Close(context.WithoutCancel(ctx))
	srv, err := mcpserve.New(ctx, h, mcpserve.Options{Agent: *agentFlag, Tools: *tools, Agents: *agents, Version: version()})
	if err != nil {
		return usageErr(e, "mcp serve: %v", err)
	}
	// Calls still running when the client goes away were cancelled with
	// it: wait for them to end (aborted, their sessions written) before
	// the host is closed.
	defer srv.Wait()
	if *httpAddr != "" {
		return serveHTTP(ctx, srv, *httpAddr, token, &logger, e)
	}
	logger.Info().Msg("serving MCP on stdio")
	err = srv.Run(ctx, &mcp.IOTransport{Reader: stdinCloser{e}, Writer: stdoutCloser{e}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		logger.Error().Err(err).Msg("MCP session ended")
		return exitError
	}
	return exitOK
}

// stdinCloser and stdoutCloser give the command's streams the Close the
// transport wants; closing them is left to the process.
type stdinCloser struct{ e *env }

func (s stdinCloser) Read(p []byte) (int, error) { return s.e.stdin.Read(p) }
func (stdinCloser) Close() error                 { return nil }

type stdoutCloser struct{ e *env }

func (s stdoutCloser) Write(p []byte) (int, error) { return s.e.stdout.Write(p) }
func (stdoutCloser) Close() error                  { return nil }

// checkListenAddr refuses an address that is not host:port, and one that
// is not loopback when no token protects it.
func checkListenAddr(addr string, withToken bool) error {
	hostPart, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("not host:port (%v); for example 127.0.0.1:8808", err)
	}
	if withToken || loopbackHost(hostPart) {
		return nil
	}
	return errors.New("not a loopback address and no token: listen on 127.0.0.1 or [::1], or pass --token-env VAR so clients must send the token in VAR")
}

// loopbackHost reports whether h names only the loopback interface: an IP
// literal of it, or "localhost". "" (every interface) is not.
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves srv as streamable HTTP at /mcp until ctx ends. It logs
// the URL it serves (a port chosen by the system with ":0" too).
func serveHTTP(ctx context.Context, srv *mcpserve.Server, addr, token string, logger *zerolog.Logger, e *env) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: --http %s: %v\n", addr, err)
		return exitError
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler(srv, token))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	url := fmt.Sprintf("http://%s/mcp", ln.Addr())
	logger.Info().Str("url", url).Bool("token", token != "").Msg("serving MCP over HTTP")
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error().Err(err).Msg("HTTP server failed")
		return exitError
	}
	return exitOK
}

// mcpHandler is the HTTP handler of srv: the SDK's streamable HTTP
// handler behind the token check (when token is set) and the refusal of
// cross-origin browser requests. A client ending its session (DELETE)
// cancels the session's calls first.
func mcpHandler(srv *mcpserve.Server, token string) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil)
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				srv.CancelSession(id)
			}
		}
		sdk.ServeHTTP(w, r)
	})
	// A web page in the user's browser must not drive a local server:
	// cross-origin browser requests are refused (the SDK refuses a
	// non-loopback Host on a loopback address, against DNS rebinding).
	handler = http.NewCrossOriginProtection().Handler(handler)
	if token != "" {
		handler = bearer(token, handler)
	}
	return handler
}

// bearer lets through only requests with "Authorization: Bearer token".
func bearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agenthost"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
