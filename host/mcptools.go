package host

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpuse"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/loop"
)

// KindMCP is the kind `agenthost tools` shows for the tools of an
// mcp_server block.
const KindMCP plugin.Kind = "mcp"

// mcpTool is a tool of an MCP server as offered to agents: spec.Name is
// SERVER__TOOL, tool the server's own name for it.
type mcpTool struct {
	server  *mcpuse.Server
	tool    string
	timeout time.Duration // the server's timeout per request
}

// loadMCPServers starts every mcp_server of the config (concurrently) and
// lists its tools, so that agents' tool names are checked at load: a
// server that does not start, or lacks an allowlisted tool, is a
// diagnostic at its block. taken holds the names of the plugins' tools; the
// servers' tools are added to h.tools as SERVER__TOOL.
func (h *Host) loadMCPServers(ctx context.Context, cfg *config.Config, taken map[string]toolBlock) hcl.Diagnostics {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	log := *zerolog.Ctx(ctx)
	servers := make([]*mcpuse.Server, len(cfg.MCPServers))
	specs := make([][]loop.ToolSpec, len(cfg.MCPServers))
	errs := make([]error, len(cfg.MCPServers))
	var wg sync.WaitGroup
	for i, s := range cfg.MCPServers {
		servers[i] = h.newMCPServer(cfg, s, log)
		wg.Add(1)
		go func() {
			defer wg.Done()
			specs[i], errs[i] = servers[i].Tools(ctx)
		}()
	}
	wg.Wait()
	h.mcpServers = servers
	var diags hcl.Diagnostics
	for i, s := range cfg.MCPServers {
		if errs[i] != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "MCP server failed to load",
				Detail:   errs[i].Error() + ". agenthost starts every mcp_server when it loads the config, to list its tools.",
				Subject:  s.DefRange.Ptr(),
			})
			continue
		}
		b := toolBlock{kind: "mcp_server", name: s.Name, def: s.DefRange, names: &s.ToolNames}
		diags = append(diags, unknownRenames(b.String(), &s.ToolNames, specs[i])...)
		for _, spec := range specs[i] {
			tool := spec.Name
			spec.Name = s.ToolName(tool)
			if d := nameTool(b, tool, spec.Name, taken); d != nil {
				diags = append(diags, d)
				continue
			}
			h.tools[spec.Name] = toolRef{spec: spec, mcp: &mcpTool{server: servers[i], tool: tool, timeout: s.Timeout}}
			h.mcpTools = append(h.mcpTools, Tool{Name: spec.Name, Plugin: s.Name, Kind: KindMCP, Description: spec.Description, InputSchema: spec.InputSchema,
				Annotations: spec.Annotations, OutputSchema: spec.OutputSchema})
		}
	}
	return diags
}

// MCPServer returns a client of the config's mcp_server name, not started,
// with the options' logins and user: `agenthost mcp login` logs in with it
// without loading the rest of the config. nil when there is no such block.
func MCPServer(cfg *config.Config, name string, opts Options, log zerolog.Logger) *mcpuse.Server {
	for _, s := range cfg.MCPServers {
		if s.Name == name {
			h := &Host{mcpOpts: opts}
			return h.newMCPServer(cfg, s, log)
		}
	}
	return nil
}

// MCPLoginStore is where the OAuth logins of url mcp_servers are kept:
// opts.MCPLoginDir, else mcpuse.DefaultTokenDir.
func MCPLoginStore(opts Options) (*mcpuse.TokenStore, error) {
	if opts.MCPLoginDir != "" {
		return &mcpuse.TokenStore{Dir: opts.MCPLoginDir}, nil
	}
	d, err := mcpuse.DefaultTokenDir(opts.Getenv)
	if err != nil {
		return nil, err
	}
	return &mcpuse.TokenStore{Dir: d}, nil
}

// MCPLoginStoreError is the error of MCPLogin when the login could not be
// kept: found before anyone logs in for nothing.
type MCPLoginStoreError struct{ Err error }

func (e *MCPLoginStoreError) Error() string { return "the login could not be kept: " + e.Err.Error() }
func (e *MCPLoginStoreError) Unwrap() error { return e.Err }

// MCPLogin logs in to the url mcp_server block of cfg anew, opts.MCPLogin
// showing the login page. With the authorization code grant the login is
// kept in MCPLoginStore, which is checked first (*MCPLoginStoreError); a
// login that then cannot be written is an error too (Login's). With client
// credentials it checks that they get a token, kept in memory only. got
// is false when the server asked for no login; kept is where the login is
// kept ("" for client credentials).
func MCPLogin(ctx context.Context, cfg *config.Config, block *config.MCPServer, opts Options) (got bool, kept string, err error) {
	if block.OAuth.Grant != config.GrantClientCredentials {
		store, err := MCPLoginStore(opts)
		if err == nil {
			kept, err = store.Path(block.Name, block.URL), store.Check()
		}
		if err != nil {
			return false, "", &MCPLoginStoreError{err}
		}
	}
	s := MCPServer(cfg, block.Name, opts, zerolog.Nop())
	defer s.Close()
	got, err = s.Login(ctx)
	return got, kept, err
}

// newMCPServer makes the client of block s.
func (h *Host) newMCPServer(cfg *config.Config, s *config.MCPServer, log zerolog.Logger) *mcpuse.Server {
	slog := log.With().Str("mcp_server", s.Name).Logger()
	spec := mcpuse.Spec{
		Name:      s.Name,
		Command:   s.Command,
		Env:       s.Env,
		Dir:       cfg.Dir,
		URL:       s.URL,
		Headers:   s.Headers,
		Tools:     s.Tools,
		Timeout:   s.Timeout,
		MaxOutput: s.MaxOutput,
		Stderr:    stderrLog(slog),
		Roots:     s.Roots,
		Elicit:    h.mcpOpts.MCPElicit,
	}
	if s.Sampling {
		spec.Sample = mcpSampler{}
	}
	// The host's tools follow a server's changed list at once, not only
	// at the next step, so that mcp serve tells its clients.
	spec.ToolsListed = func() { h.refreshTools(slog.WithContext(context.Background())) }
	if o := s.OAuth; o != nil {
		spec.OAuth = &mcpuse.OAuth{MCPOAuth: *o, User: h.mcpOpts.MCPLogin}
		if store, err := MCPLoginStore(h.mcpOpts); err != nil {
			slog.Warn().Str("error", err.Error()).Msg("MCP logins kept in memory only")
		} else {
			spec.OAuth.Store = store
		}
	}
	return mcpuse.New(spec, log)
}

// closeMCPServers stops every MCP server (concurrently: a stdio server
// may take up to 2s to stop).
func (h *Host) closeMCPServers() error {
	errs := make([]error, len(h.mcpServers))
	var wg sync.WaitGroup
	for i, s := range h.mcpServers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Close()
		}()
	}
	wg.Wait()
	h.mcpServers = nil
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callMCP calls an MCP server's tool under its own name.
func (r toolRef) callMCP(ctx context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	call.Name = r.mcp.tool
	return r.mcp.server.Call(ctx, call)
}

// stderrLog writes each line a server prints on stderr to the log (at
// info level: the server is not ours, so its lines are data, not
// severities). A line longer than 4 KiB is logged in pieces.
func stderrLog(log zerolog.Logger) io.Writer { return &lineLog{log: log} }

type lineLog struct {
	log zerolog.Logger
	mu  sync.Mutex
	buf []byte
}

const maxLogLine = 4 << 10

func (w *lineLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) < maxLogLine {
			break
		}
		if i < 0 || i > maxLogLine {
			i = maxLogLine
		}
		w.log.Info().Str("stderr", strings.TrimRight(string(w.buf[:i]), "\r")).Msg("MCP server stderr")
		if i < len(w.buf) && w.buf[i] == '\n' {
			i++
		}
		w.buf = w.buf[i:]
	}
	return len(p), nil
}
