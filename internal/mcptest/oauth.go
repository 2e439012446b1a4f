package mcptest

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthOptions are the settings of StartOAuth.
type OAuthOptions struct {
	// Record is the file the server appends what it saw to (see newServer),
	// and one line per token request: "token GRANT resource=RESOURCE".
	Record string
	// ExpiresIn is the lifetime of access tokens in seconds (default 3600);
	// below 10, every use of a token refreshes it first (the client takes
	// a token that expires within 10s for expired).
	ExpiresIn int
	// ClientID and ClientSecret are the client the client credentials
	// grant accepts; with ClientKey, that client authenticates with a JWT
	// signed by the key's private half (private_key_jwt, ES256) instead.
	ClientID, ClientSecret string
	ClientKey              *ecdsa.PublicKey
	// HostileErrors makes the token endpoint refuse every request with
	// terminal escape sequences: "json" in the error_description of a
	// JSON error (HostileErrorSize bytes of JSON), "text" as a text/plain
	// body of HostileErrorSize bytes.
	HostileErrors string
}

// HostileErrorSize is the size of the hostile error texts.
const HostileErrorSize = 1 << 20

// hostileText is about n bytes of terminal escape sequences: a window
// title change, a screen clear, a C1 CSI.
func hostileText(n int) string {
	const seq = "\x1b]0;pwned\x07\x1b[2J\u009b31m"
	return strings.Repeat(seq, n/len(seq))
}

// OAuthServer is the test MCP server protected by OAuth, with its own
// authorization server on the same origin.
type OAuthServer struct {
	URL string // http://127.0.0.1:PORT/mcp
	hs  *http.Server
}

// Close stops the server.
func (s *OAuthServer) Close() error { return s.hs.Close() }

// TokenPrefix starts every access and refresh token the server issues, so
// that a test can look for leaks.
const TokenPrefix = "tok_SECRET_"

// StartOAuth serves the tools of newServer at http://127.0.0.1:PORT/mcp,
// where a request without a valid access token is answered 401 with the
// protected resource metadata's URL, and an authorization server as the
// MCP authorization specification describes it: metadata, dynamic client
// registration, an authorization endpoint that grants at once (it
// redirects back with a code; PKCE S256 is required), and a token
// endpoint for the authorization code (the code verifier checked),
// refresh token and client credentials grants, which refuses
// (invalid_target) a request whose resource (RFC 8707) is not the MCP
// server's URL.
func StartOAuth(o OAuthOptions) (*OAuthServer, error) {
	if o.ExpiresIn == 0 {
		o.ExpiresIn = 3600
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	srv := newServer(o.Record)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var (
		mu       sync.Mutex
		access   = map[string]bool{}
		refresh  = map[string]bool{}
		codes    = map[string]string{} // code → PKCE challenge
		issueTok = func() map[string]any {
			a, r := TokenPrefix+"a_"+rand.Text(), TokenPrefix+"r_"+rand.Text()
			access[a], refresh[r] = true, true
			return map[string]any{"access_token": a, "token_type": "Bearer", "expires_in": o.ExpiresIn, "refresh_token": r, "scope": "tools"}
		}
	)
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		ok := access[tok]
		mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="tools"`, base))
			http.Error(w, "no valid access token", http.StatusUnauthorized)
			return
		}
		sdk.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		appendLine(o.Record, "register")
		writeJSON(w, 201, map[string]any{"client_id": "dyn-client", "redirect_uris": []string{}, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "PKCE S256 required", http.StatusBadRequest)
			return
		}
		code := rand.Text()
		mu.Lock()
		codes[code] = q.Get("code_challenge")
		mu.Unlock()
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		appendLine(o.Record, "authorize")
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, 400, map[string]string{"error": "invalid_request"})
			return
		}
		grant, resource := r.PostForm.Get("grant_type"), r.PostForm.Get("resource")
		appendLine(o.Record, "token "+grant+" resource="+resource)
		switch o.HostileErrors {
		case "json":
			// JSON escapes the C0 controls (\u001b: 34 bytes a
			// sequence of 19), and the body must fit in the 1 MiB
			// x/oauth2 reads for its error_description to be read.
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": hostileText((HostileErrorSize - 100) / 34 * 19)})
			return
		case "text":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(400)
			fmt.Fprint(w, hostileText(HostileErrorSize))
			return
		}
		if resource != base+"/mcp" {
			// RFC 8707 §2: the token is for this server only.
			writeJSON(w, 400, map[string]string{"error": "invalid_target", "error_description": "resource must be " + base + "/mcp"})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch grant {
		case "authorization_code":
			challenge, ok := codes[r.PostForm.Get("code")]
			delete(codes, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			if !refresh[r.PostForm.Get("refresh_token")] {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			delete(refresh, r.PostForm.Get("refresh_token"))
		case "client_credentials":
			id, secret, ok := r.BasicAuth()
			if !ok {
				id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
			}
			good := o.ClientID != "" && id == o.ClientID && secret == o.ClientSecret
			if o.ClientKey != nil {
				good = o.ClientID != "" && r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" &&
					checkAssertion(r.PostForm.Get("client_assertion"), o.ClientKey, o.ClientID, base)
			}
			if !good {
				writeJSON(w, 401, map[string]string{"error": "invalid_client"})
				return
			}
			t := issueTok()
			delete(t, "refresh_token")
			writeJSON(w, 200, t)
			return
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		writeJSON(w, 200, issueTok())
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &OAuthServer{URL: base + "/mcp", hs: hs}, nil
}

// checkAssertion reports whether assertion is a client's JWT (RFC 7523)
// signed with ES256 by key's private half, issued by and about clientID,
// for audience, and not expired.
func checkAssertion(assertion string, key *ecdsa.PublicKey, clientID, audience string) bool {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	hdr, err1 := enc.DecodeString(parts[0])
	body, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) != 64 {
		return false
	}
	var h struct{ Alg string }
	var c struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	if json.Unmarshal(hdr, &h) != nil || h.Alg != "ES256" || json.Unmarshal(body, &c) != nil {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	return c.Iss == clientID && c.Sub == clientID && c.Aud == audience && time.Now().Unix() < c.Exp
}
