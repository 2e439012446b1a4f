package config

import (
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/toolname"
)

// MCPToolSep joins a server's name and one of its tool's names into the
// name the model sees: server "fs", tool "read_text_file" is
// "fs__read_text_file" (a dot is not valid in a model-facing name).
const MCPToolSep = "__"

// DefaultMCPTimeout bounds each request to an MCP server when the block
// sets no timeout.
const DefaultMCPTimeout = 30 * time.Second

// MaxMCPOutput is the largest max_output of an mcp_server block: a result
// far beyond what a model's context holds is a mistake, and the messages
// read from the server are bounded by a multiple of it.
const MaxMCPOutput = 1 << 30

// MCPServer is an mcp_server block: an external MCP server whose tools
// agents may call as SERVER__TOOL. It is NOT sandboxed.
type MCPServer struct {
	Name string
	// Command starts a stdio server (program and arguments); URL is a
	// streamable HTTP server instead. Exactly one of them is set.
	Command []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Tools is the allowlist of the server's tools (names as the server
	// gives them); nil offers all of them.
	Tools      []string
	ToolRanges []hcl.Range
	// Timeout bounds each request (default DefaultMCPTimeout).
	Timeout time.Duration
	// MaxOutput is the bytes of a call's result text kept; the rest is cut
	// with a note (default defaults.MCPMaxOutput, at most MaxMCPOutput).
	MaxOutput int64
	// ToolNames (tool_prefix, rename) give the server's tools other names
	// than SERVER__TOOL; see ToolName.
	ToolNames
	// OAuth is how agenthost logs in to a url server that asks for it; nil
	// for a command server, and for a url server whose headers set
	// Authorization (a token given by hand).
	OAuth *MCPOAuth
	// Roots are the directories (absolute) the server may see, told to it
	// as roots; none by default.
	Roots []string
	// Sampling lets the server ask the model of the agent whose call it
	// serves for completions (sampling/createMessage), counted in that
	// run's limits; off by default.
	Sampling bool
	DefRange hcl.Range
}

// MCPOAuth is the oauth block of a url mcp_server (docs/mcp.md, "Logging
// in to servers"); host/mcpuse's OAuth client takes it as it is.'s OAuth client takes it as it is.
type MCPOAuth struct {
	// Grant is "authorization_code" (the default) or "client_credentials".
	Grant string
	// ClientID and ClientSecret are a client registered beforehand with
	// the authorization server. With the client credentials grant,
	// ClientSecret or PrivateKey authenticates it.
	ClientID     string
	ClientSecret string
	// PrivateKey is a PEM private key (EC or RSA) that signs the JWT that
	// authenticates the client (private_key_jwt), for the client
	// credentials grant; SigningAlg is its algorithm (default ES256 for
	// an EC key, RS256 for RSA).
	PrivateKey string
	SigningAlg string
	// ClientMetadataURL is an https URL where a client ID metadata
	// document of agenthost is published: it is the client ID at an
	// authorization server that supports them.
	ClientMetadataURL string
	// Scopes are asked for when the server names none.
	Scopes []string
	// RedirectPort is the loopback port of the redirect URI (0: any free
	// port, http://127.0.0.1:PORT/callback).
	RedirectPort int
}

// OAuth grants of an mcp_server's oauth block.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

type rawMCPOAuth struct {
	Grant             string    `hcl:"grant,optional"`
	GrantRange        hcl.Range `hcl:"grant,attr_value_range"`
	ClientID          string    `hcl:"client_id,optional"`
	ClientIDRange     hcl.Range `hcl:"client_id,attr_value_range"`
	ClientSecret      string    `hcl:"client_secret,optional"`
	PrivateKey        string    `hcl:"private_key,optional"`
	PrivateKeyRange   hcl.Range `hcl:"private_key,attr_value_range"`
	SigningAlg        string    `hcl:"signing_alg,optional"`
	SigningAlgRange   hcl.Range `hcl:"signing_alg,attr_value_range"`
	ClientMetadataURL string    `hcl:"client_metadata_url,optional"`
	CMURange          hcl.Range `hcl:"client_metadata_url,attr_value_range"`
	Scopes            []string  `hcl:"scopes,optional"`
	ScopesRange       hcl.Range `hcl:"scopes,attr_value_range"`
	RedirectPort      *int      `hcl:"redirect_port,optional"`
	RedirectPortRange hcl.Range `hcl:"redirect_port,attr_value_range"`
	DefRange          hcl.Range `hcl:",def_range"`
}

// ToolName is the model-facing name of the server's tool: its rename when
// the block's rename map has one, else the block's tool_prefix + tool, or
// by default SERVER__TOOL. The server is always called with tool.
func (s *MCPServer) ToolName(tool string) string { return s.named(s.Prefix(), tool) }

// Prefix is what is put before the names of the server's tools: the
// block's tool_prefix, or by default its name and MCPToolSep.
func (s *MCPServer) Prefix() string {
	if s.ToolPrefix != "" {
		return s.ToolPrefix
	}
	return s.Name + MCPToolSep
}

type rawMCPServer struct {
	Name         string            `hcl:"name,label"`
	NameRange    hcl.Range         `hcl:"name,label_range"`
	Command      []string          `hcl:"command,optional"`
	CommandRange hcl.Range         `hcl:"command,attr_value_range"`
	Env          map[string]string `hcl:"env,optional"`
	URL          string            `hcl:"url,optional"`
	URLRange     hcl.Range         `hcl:"url,attr_value_range"`
	Headers      map[string]string `hcl:"headers,optional"`
	HeadersRange hcl.Range         `hcl:"headers,attr_value_range"`
	Tools        hcl.Expression    `hcl:"tools,optional"`
	ToolsRange   hcl.Range         `hcl:"tools,attr_value_range"`
	Timeout      string            `hcl:"timeout,optional"`
	TimeoutRange hcl.Range         `hcl:"timeout,attr_value_range"`
	MaxOutput    string            `hcl:"max_output,optional"`
	MaxOutRange  hcl.Range         `hcl:"max_output,attr_value_range"`
	// ToolPrefix and Rename change the names the model sees (names.go).
	ToolPrefix      string            `hcl:"tool_prefix,optional"`
	ToolPrefixRange hcl.Range         `hcl:"tool_prefix,attr_value_range"`
	Rename          map[string]string `hcl:"rename,optional"`
	RenameRange     hcl.Range         `hcl:"rename,attr_value_range"`
	OAuth           *rawMCPOAuth      `hcl:"oauth,block"`
	Roots           []string          `hcl:"roots,optional"`
	Sampling        bool              `hcl:"sampling,optional"`
	RootsRange      hcl.Range         `hcl:"roots,attr_value_range"`
	DefRange        hcl.Range         `hcl:",def_range"`
}

// mcpServer checks and converts one mcp_server block. Its name was checked
// unique among plugins and MCP servers by the caller.
func (b *builder) mcpServer(rs *rawMCPServer) *MCPServer {
	s := &MCPServer{
		Name:     rs.Name,
		Env:      rs.Env,
		Headers:  rs.Headers,
		DefRange: rs.DefRange,
	}
	if !toolname.Valid(rs.Name+MCPToolSep+"x") || strings.Contains(rs.Name, MCPToolSep) {
		b.errorf(rs.NameRange, "Invalid MCP server name",
			"%q cannot name an MCP server: its tools are offered to models as %s__TOOL, which must match %s; use letters, digits, '_' and '-' (no \"__\"), at most %d of them.",
			rs.Name, rs.Name, toolname.Pattern, toolname.MaxLen-3)
	}
	hasCmd, hasURL := b.set(rs.CommandRange), b.set(rs.URLRange)
	switch {
	case hasCmd && hasURL:
		b.errorf(rs.URLRange, "Both command and url", "An mcp_server is either a local program (command) or a remote server (url), not both; remove one of them.")
	case !present(rs.CommandRange) && !present(rs.URLRange):
		b.errorf(rs.DefRange, "Missing command or url",
			"mcp_server %q needs command = [\"PROGRAM\", \"ARG\", ...] to start a stdio server, or url = \"http://HOST/mcp\" for a streamable HTTP server.", rs.Name)
	case hasCmd:
		if len(rs.Command) == 0 || strings.TrimSpace(rs.Command[0]) == "" {
			b.errorf(rs.CommandRange, "Empty command", "command is the program and its arguments, e.g. [\"npx\", \"-y\", \"@modelcontextprotocol/server-filesystem\", \"./workspace\"].")
		} else {
			s.Command = rs.Command
		}
		if present(rs.HeadersRange) {
			b.errorf(rs.HeadersRange, "headers without url", "headers are sent to an HTTP server (url); a command server gets settings through env.")
		}
	case hasURL:
		u, err := url.Parse(rs.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			b.errorf(rs.URLRange, "Invalid url", "url must be an http:// or https:// address of a streamable HTTP MCP server, e.g. \"http://127.0.0.1:9000/mcp\"; got %q.", redact.URL(rs.URL))
		} else {
			s.URL = rs.URL
		}
		if len(rs.Env) > 0 {
			b.errorf(rs.DefRange, "env without command", "env is the environment of a server started with command; an HTTP server (url) gets settings through headers.")
		}
	}
	s.Timeout = b.duration(rs.Timeout, rs.TimeoutRange, "timeout", DefaultMCPTimeout)
	if b.set(rs.TimeoutRange) && s.Timeout <= 0 {
		b.errorf(rs.TimeoutRange, "Invalid timeout", "timeout must be more than zero, e.g. \"30s\"; remove it for the default (%s).", DefaultMCPTimeout)
		s.Timeout = DefaultMCPTimeout
	}
	s.MaxOutput = defaults.MCPMaxOutput
	if out := b.size(rs.MaxOutput, rs.MaxOutRange, "max_output", defaults.MCPMaxOutput); out < 1 || out > MaxMCPOutput {
		b.errorf(rs.MaxOutRange, "Invalid max_output", "max_output is the bytes of a tool result kept (the rest is cut with a note) and must be from 1 byte to 1GiB, like \"1MiB\" (the default), not %q.", rs.MaxOutput)
	} else {
		s.MaxOutput = int64(out)
	}
	b.toolNames(&s.ToolNames, rs.ToolPrefix, rs.ToolPrefixRange, rs.Rename, rs.RenameRange)
	for _, r := range rs.Roots {
		if strings.TrimSpace(r) == "" {
			b.errorf(rs.RootsRange, "Invalid roots", "roots are directories the server may see, like [\"./workspace\"] (relative to the config's directory); an empty one names nothing.")
			continue
		}
		s.Roots = append(s.Roots, b.abs(r))
	}
	s.Sampling = rs.Sampling
	s.OAuth = b.mcpOAuth(rs, s)
	if present(rs.ToolsRange) {
		names, ranges := b.nameList(rs.Tools, rs.ToolsRange, "tools", "tool")
		if names == nil {
			names = []string{}
		}
		s.Tools, s.ToolRanges = names, ranges
		for i, n := range names {
			if !toolname.Valid(s.ToolName(n)) {
				b.errorf(ranges[i], "Invalid MCP tool name",
					"%q would be offered to models as %q, which does not match %s; leave it out of tools, or give it a name with rename = { %s = \"...\" }.", n, s.ToolName(n), toolname.Pattern, n)
			}
		}
	}
	return s
}

// mcpOAuth checks the oauth block of rs. A url server gets the default
// OAuth settings without one, unless its headers set Authorization.
func (b *builder) mcpOAuth(rs *rawMCPServer, s *MCPServer) *MCPOAuth {
	ro := rs.OAuth
	if s.URL == "" {
		if ro != nil && s.Command != nil {
			b.errorf(ro.DefRange, "oauth without url", "OAuth is how agenthost logs in to an HTTP server (url); a command server gets its credentials through env.")
		}
		return nil
	}
	for k := range rs.Headers {
		if strings.EqualFold(k, "Authorization") {
			if ro != nil {
				b.errorf(ro.DefRange, "oauth and an Authorization header", "headers already set Authorization (a token given by hand); remove the header to log in with OAuth, or the oauth block to keep the header.")
			}
			return nil
		}
	}
	o := &MCPOAuth{Grant: GrantAuthorizationCode}
	if ro == nil {
		return o
	}
	o.ClientID, o.ClientSecret, o.PrivateKey, o.SigningAlg = ro.ClientID, ro.ClientSecret, ro.PrivateKey, ro.SigningAlg
	o.ClientMetadataURL, o.Scopes = ro.ClientMetadataURL, ro.Scopes
	switch ro.Grant {
	case "", GrantAuthorizationCode:
		if present(ro.PrivateKeyRange) {
			b.errorf(ro.PrivateKeyRange, "private_key without client credentials", "private_key authenticates the client in the client credentials grant; set grant = \"client_credentials\", or remove it.")
		}
	case GrantClientCredentials:
		o.Grant = GrantClientCredentials
		switch {
		case ro.ClientID == "":
			b.errorf(ro.DefRange, "client_id missing", "the client credentials grant needs the client registered with the authorization server: client_id, and client_secret or private_key.")
		case (ro.ClientSecret == "") == (ro.PrivateKey == ""):
			b.errorf(ro.ClientIDRange, "client_secret or private_key", "the client credentials grant authenticates the client with client_secret (e.g. env(\"MCP_CLIENT_SECRET\")) or private_key (a PEM key, e.g. file(\"key.pem\")): set one of them.")
		}
	default:
		b.errorf(ro.GrantRange, "Invalid grant", "grant is \"authorization_code\" (a person logs in with a browser; the default) or \"client_credentials\" (a client registered beforehand, for CI), not %q.", ro.Grant)
	}
	if present(ro.SigningAlgRange) && ro.PrivateKey == "" {
		b.errorf(ro.SigningAlgRange, "signing_alg without private_key", "signing_alg is the algorithm of private_key; remove it.")
	}
	switch ro.SigningAlg {
	case "", "ES256", "ES384", "ES512", "RS256":
	default:
		b.errorf(ro.SigningAlgRange, "Invalid signing_alg", "signing_alg is ES256, ES384, ES512 (EC keys) or RS256 (RSA keys), not %q; without it, it follows the key.", ro.SigningAlg)
	}
	if ro.ClientMetadataURL != "" {
		u, err := url.Parse(ro.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			b.errorf(ro.CMURange, "Invalid client_metadata_url", "client_metadata_url is the https URL, with a path, where agenthost's client ID metadata document is published, like \"https://example.com/agenthost/client.json\"; got %q.", ro.ClientMetadataURL)
		}
	}
	if ro.RedirectPort != nil {
		if *ro.RedirectPort < 1 || *ro.RedirectPort > 65535 {
			b.errorf(ro.RedirectPortRange, "Invalid redirect_port", "redirect_port is the loopback port of the login's redirect URI (http://127.0.0.1:PORT/callback), 1 to 65535; remove it for any free port.")
		} else {
			o.RedirectPort = *ro.RedirectPort
		}
	}
	for _, sc := range ro.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\"\\") {
			b.errorf(ro.ScopesRange, "Invalid scope", "a scope is a word without spaces or quotes, like \"repo\"; got %q.", sc)
		}
	}
	return o
}
