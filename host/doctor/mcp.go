package doctor

import (
	"time"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpuse"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/shquote"
)

// MCPServer is the report on the login of one url mcp_server that logs in
// with OAuth.
type MCPServer struct {
	Server string  `json:"mcp_server"`
	URL    string  `json:"url"` // redacted
	Checks []Check `json:"checks"`
}

// OK reports whether every check passed or was skipped.
func (s MCPServer) OK() bool { return allOK(s.Checks) }

// CheckMCPLogins checks the kept login of every url mcp_server of cfg that
// logs in with OAuth: a login whose access token is still good, or that
// has a refresh token, passes; one that expired without a refresh token,
// or that cannot be read, fails with the command that mends it. A server
// without a kept login is skipped: it needs one only if it asks (the load
// says so). store is where logins are kept; now is the time checked at.
func CheckMCPLogins(cfg *config.Config, store *mcpuse.TokenStore, now time.Time) []MCPServer {
	var out []MCPServer
	for _, s := range cfg.MCPServers {
		if s.OAuth == nil {
			continue
		}
		r := MCPServer{Server: s.Name, URL: redact.URL(s.URL)}
		c := Check{Name: "login"}
		fix := shquote.Command([]string{"agenthost", "mcp", "login"}, s.Name)
		switch {
		case s.OAuth.Grant == config.GrantClientCredentials:
			c.Status, c.Detail = Skip, "client credentials: a token is got at each start"
		case store == nil:
			c.Status, c.Detail = Skip, "no directory for logins"
		default:
			l, err := store.Load(s.Name, s.URL)
			switch {
			case err != nil:
				c.Status, c.Detail, c.Hint = Fail, err.Error(), fix
			case l == nil:
				c.Status, c.Detail = Skip, "no login kept (needed only if the server asks for one)"
			case l.Token.Expiry.IsZero() || l.Token.Expiry.After(now):
				c.Status, c.Detail = OK, "logged in"
				if !l.Token.Expiry.IsZero() {
					c.Detail += "; the access token is good until " + l.Token.Expiry.UTC().Format(time.RFC3339)
				}
			case l.Token.RefreshToken != "":
				c.Status, c.Detail = OK, "logged in; the access token expired and is refreshed at the next use"
			default:
				c.Status, c.Detail, c.Hint = Fail, "the login expired at "+l.Token.Expiry.UTC().Format(time.RFC3339)+" and cannot be refreshed", fix
			}
		}
		r.Checks = []Check{c}
		out = append(out, r)
	}
	return out
}
