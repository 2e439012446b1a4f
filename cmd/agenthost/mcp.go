package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/buildinfo"
	"github.com/agenthost/agenthost/cmd/agenthost/internal/httplimits"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/mcpserve"
	"github.com/agenthost/agenthost/host/mcpserve/httpserve"
)

// newMCPCmd is `agenthost mcp`: serve (agenthost as an MCP server), call,
// login and logout (the mcp_server blocks it uses). -c/--config is the
// group's, for all four.
func newMCPCmd(c *cli) *cobra.Command {
	g := group("mcp", "Serve agents and tools over MCP, and use MCP servers")
	cfgFlag := configFlag(g.PersistentFlags())
	c.complete().Flags(g)
	g.AddCommand(newMCPServeCmd(c, cfgFlag), newMCPCallCmd(c, cfgFlag),
		oauthCmd(c, cfgFlag, "login", "Log in to an mcp_server with OAuth", mcpLogin),
		oauthCmd(c, cfgFlag, "logout", "Forget the OAuth tokens of an mcp_server", mcpLogout))
	return g
}

// newMCPServeCmd serves plugin tools and agents over MCP: on stdin/stdout by
// default, over streamable HTTP with --http. Nothing but the protocol is
// written to stdout; logs go to stderr or --log-file.
func newMCPServeCmd(c *cli, cfgFlag *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve plugin tools (--tools) or agents (--agents) to MCP clients",
		Long: `Serve plugin tools (--tools, the default) or agents (--agents) to MCP clients, over stdio
or streamable HTTP (--http ADDR).`,
		Example: "  agenthost mcp serve\n  agenthost mcp serve --agents --http 127.0.0.1:8080",
	}
	fs := cmd.Flags()
	agentFlag := agentFlag(fs, "serve only this `agent`'s tools (--tools) or this agent (--agents)")
	tools := fs.Bool("tools", false, "serve plugin tools (the default when --agents is not given)")
	agents := fs.Bool("agents", false, "serve agents as tools taking {\"prompt\": string}")
	httpAddr := fs.String("http", "", "serve streamable HTTP on this `address` (host:port) at /mcp instead of stdio")
	tokenEnv := fs.String("token-env", "", "with --http, require 'Authorization: Bearer TOKEN', TOKEN read from this environment `variable`")
	limits := httplimits.Declare(fs)
	logLevel := logLevelFlag(fs, "info", "log `level`: debug, info, warn, error")
	logFile := fs.String("log-file", "", "append logs to this `file` instead of stderr")
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
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
			if err := httpserve.CheckListenAddr(*httpAddr, token != ""); err != nil {
				return usageErr(e, "--http %s: %v", *httpAddr, err)
			}
		}
		if err := httplimits.Check(fs, *httpAddr != "", *limits); err != nil {
			return usageErr(e, "%v", err)
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

		// The used MCP servers' questions go to the MCP client whose call
		// they serve, never to a terminal: stdin is the protocol's, or nobody's.
		opts := hostOptions(e)
		opts.MCPElicit = host.ClientElicitor{Log: logger}
		h, code := loadHost(ctx, configPath(*cfgFlag, e), opts, e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		// The served calls, and the agent runs waiting for a client's
		// answer between two calls, end with serving.
		sctx, stopServing := context.WithCancel(ctx)
		srv, err := mcpserve.New(sctx, h, mcpserve.Options{Agent: *agentFlag, Tools: *tools, Agents: *agents, Version: buildinfo.Version()})
		if err != nil {
			stopServing()
			return usageErr(e, "mcp serve: %v", err)
		}
		// Calls still running when the client goes away were cancelled with
		// it: wait for them to end (aborted, their sessions written) before
		// the host is closed.
		defer srv.Wait()
		defer stopServing()
		if *httpAddr != "" {
			ln, err := net.Listen("tcp", *httpAddr)
			if err != nil {
				fmt.Fprintf(e.stderr, "agenthost: --http %s: %v\n", *httpAddr, err)
				return exitError
			}
			if err := httpserve.Serve(ctx, srv, ln, token, *limits, &logger); err != nil {
				logger.Error().Err(err).Msg("HTTP server failed")
				return exitError
			}
			return exitOK
		}
		logger.Info().Msg("serving MCP on stdio")
		err = srv.Run(ctx, &mcp.IOTransport{Reader: stdinCloser{e}, Writer: stdoutCloser{e}})
		if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			logger.Error().Err(err).Msg("MCP session ended")
			return exitError
		}
		return exitOK
	})
}

// stdinCloser and stdoutCloser give the command's streams the Close the
// transport wants; closing them is left to the process.
type stdinCloser struct{ e *env }

func (s stdinCloser) Read(p []byte) (int, error) { return s.e.stdin.Read(p) }
func (stdinCloser) Close() error                 { return nil }

type stdoutCloser struct{ e *env }

func (s stdoutCloser) Write(p []byte) (int, error) { return s.e.stdout.Write(p) }
func (stdoutCloser) Close() error                  { return nil }
