package mcpuse

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/config"
)

// TestOAuthTokenRedirectElsewhereRefused: an authorization server whose
// token endpoint redirects to another origin does not get the client's
// secret sent there (it travels in the body with client_secret_post, which
// a 307 would send again): the redirect is refused, and the error says so
// without the secret.
func TestOAuthTokenRedirectElsewhereRefused(t *testing.T) {
	var elsewhere atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"x","token_type":"Bearer"}`)
	}))
	defer evil.Close()
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize", "token_endpoint": as.URL + "/token",
				"response_types_supported":              []string{"code"},
				"token_endpoint_auth_methods_supported": []string{"client_secret_post"}, "code_challenge_methods_supported": []string{"S256"},
			})
		case "/token":
			http.Redirect(w, r, evil.URL+"/token", http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	defer as.Close()
	var mcpURL string
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": mcpURL, "authorization_servers": []string{as.URL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+strings.TrimSuffix(mcpURL, "/mcp")+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	defer rs.Close()
	mcpURL = rs.URL + "/mcp"

	s := New(Spec{Name: "o", URL: mcpURL, Timeout: 10 * time.Second,
		OAuth: &OAuth{MCPOAuth: config.MCPOAuth{Grant: "client_credentials", ClientID: "bot", ClientSecret: "very-secret-value"}}}, zerolog.Nop())
	defer s.Close()
	_, err := s.Tools(context.Background())
	if err == nil {
		t.Fatal("listing tools succeeded; want the token request's redirect refused")
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the other origin got %d requests", elsewhere.Load())
	}
	if !strings.Contains(err.Error(), "redirected to another origin") || strings.Contains(err.Error(), "very-secret-value") {
		t.Errorf("error %q: want the refused redirect named, without the secret", err)
	}
}
