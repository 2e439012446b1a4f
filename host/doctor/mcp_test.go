package doctor

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpuse"
)

// TestCheckMCPLogins: a good login passes, an expired one with a refresh
// token passes, an expired one without fails with the command that mends
// it, no login and client credentials are skipped, and servers without
// OAuth are not reported.
func TestCheckMCPLogins(t *testing.T) {
	store := &mcpuse.TokenStore{Dir: filepath.Join(t.TempDir(), "logins")}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(name string, tok *oauth2.Token) {
		t.Helper()
		if err := store.Save(name, "https://"+name+"/mcp", &mcpuse.Login{ClientID: "c", TokenURL: "https://x/token", Token: tok}); err != nil {
			t.Fatal(err)
		}
	}
	save("good", &oauth2.Token{AccessToken: "a", Expiry: now.Add(time.Hour)})
	save("refresh", &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: now.Add(-time.Hour)})
	save("expired", &oauth2.Token{AccessToken: "a", Expiry: now.Add(-time.Hour)})
	oauth := &config.MCPOAuth{Grant: config.GrantAuthorizationCode}
	cfg := &config.Config{MCPServers: []*config.MCPServer{
		{Name: "good", URL: "https://good/mcp", OAuth: oauth},
		{Name: "refresh", URL: "https://refresh/mcp", OAuth: oauth},
		{Name: "expired", URL: "https://expired/mcp", OAuth: oauth},
		{Name: "none", URL: "https://none/mcp", OAuth: oauth},
		{Name: "ci", URL: "https://ci/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantClientCredentials}},
		{Name: "cmd", Command: []string{"x"}},
	}}
	got := map[string]Check{}
	for _, s := range CheckMCPLogins(cfg, store, now) {
		got[s.Server] = s.Checks[0]
	}
	want := map[string]Status{"good": OK, "refresh": OK, "expired": Fail, "none": Skip, "ci": Skip}
	if len(got) != len(want) {
		t.Errorf("reported %d servers, want %d: %v", len(got), len(want), got)
	}
	for name, st := range want {
		if got[name].Status != st {
			t.Errorf("%s: %s (%s), want %s", name, got[name].Status, got[name].Detail, st)
		}
	}
	if got["expired"].Hint != "agenthost mcp login -- expired" {
		t.Errorf("expired: hint %q", got["expired"].Hint)
	}
}
