package mcpuse

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256" // SHA-256 for ES256 and RS256
	_ "crypto/sha512" // SHA-384 and SHA-512 for ES384 and ES512
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/internal/textcut"
)

// OAuth is how agenthost gets access tokens for a url server that asks
// for them, as the MCP authorization specification describes: the
// protected resource's metadata names its authorization server, whose
// metadata names the endpoints; agenthost is a client there through a
// client ID metadata document (ClientMetadataURL, when the server supports
// them), a pre-registered client (ClientID) or dynamic client
// registration; it gets a token by the authorization code grant with PKCE
// through a loopback redirect (a person logs in with a browser), or by the
// client credentials grant (Grant "client_credentials", for CI), and
// refreshes it. Every token request names the server as its resource
// (RFC 8707), so that the token is good for that server only. A 403
// insufficient_scope asks again with the scopes the server names
// (step-up).
type OAuth struct {
	// MCPOAuth is the mcp_server's oauth block: the grant, the client
	// (registered, by metadata document or dynamic), its key, the scopes
	// and the redirect port.
	config.MCPOAuth
	// Store keeps the logins (authorization code grant); nil keeps them in
	// memory only.
	Store *TokenStore
	// User is who logs in; nil when nobody can (a run without a terminal):
	// a server that wants a login then fails with a message that says to
	// run `agenthost mcp login NAME`.
	User LoginUser
}

// LoginUser shows a person the authorization URL of a login: it prints
// it, and opens a browser when it can. The login goes on when the browser
// comes back to agenthost's loopback redirect URI.
type LoginUser interface {
	OpenLogin(ctx context.Context, server, authURL string) error
}

// ErrLoginNeeded is the error of a server that wants a login when nobody
// can log in (no LoginUser).
var ErrLoginNeeded = errors.New("the server wants you to log in")

// LoginTimeout bounds a login through the browser, from the URL shown to
// the redirect back.
const LoginTimeout = 5 * time.Minute

// maxOAuthBody bounds what is read from the loopback redirect's request.
const maxOAuthBody = 64 << 10

// oauthHandler is the auth.OAuthHandler of a url server: the SDK's
// handlers do the protocol; this keeps the token (in Store), makes the
// loopback redirect for each login, and says what to do when nobody can
// log in.
type oauthHandler struct {
	s   *Server
	cfg *OAuth
	hc  *http.Client // for the authorization server: no redirect to another origin

	mu      sync.Mutex
	ts      oauth2.TokenSource
	granted []string // the scopes asked for so far (step-up adds to them)
	cc      auth.OAuthHandler
	logins  int   // logins done (tokens got) by this handler
	keepErr error // why the last login was not kept in Store, if it was not

	// loginMu makes logins one at a time: calls refused together start
	// one login, and those that waited retry with its token.
	loginMu sync.Mutex
}

func newOAuthHandler(s *Server, cfg *OAuth) *oauthHandler {
	h := &oauthHandler{s: s, cfg: cfg}
	h.hc = &http.Client{Timeout: s.spec.Timeout, CheckRedirect: sameOriginRedirect}
	if cfg.Store != nil && cfg.Grant != config.GrantClientCredentials {
		l, err := cfg.Store.Load(s.spec.Name, s.spec.URL)
		if err != nil {
			s.log.Warn().Str("error", err.Error()).Msg("MCP login not read")
		} else if l != nil {
			h.ts = h.persisting(l)
			h.granted = l.Scopes
		}
	}
	return h
}

// sameOriginRedirect refuses a redirect to another origin, or from https
// to http: the requests to an authorization server carry the client's
// credentials and codes.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		return fmt.Errorf("redirected to another origin (%s); agenthost sends OAuth requests to one origin only", origin(req.URL))
	}
	return nil
}

// mayLogin reports whether a person will be asked to log in at the first
// request: there is someone to ask and no login yet.
func (h *oauthHandler) mayLogin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.User != nil && h.cfg.Grant != config.GrantClientCredentials && h.ts == nil
}

// forget drops the login in memory (the stored one stays until replaced).
func (h *oauthHandler) forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ts, h.granted, h.cc, h.logins, h.keepErr = nil, nil, nil, 0, nil
}

// TokenSource is the token source of the last login; nil before any (the
// request then goes without a token, and a 401 starts a login).
func (h *oauthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cc != nil {
		return h.cc.TokenSource(ctx)
	}
	return h.ts, nil
}

// Authorize gets a token after a 401 or 403 of the server.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.cfg.Grant == config.GrantClientCredentials {
		return h.clientCredentials(ctx, req, resp)
	}
	h.mu.Lock()
	before := h.logins
	h.mu.Unlock()
	h.loginMu.Lock()
	defer h.loginMu.Unlock()
	h.mu.Lock()
	done := h.logins != before
	h.mu.Unlock()
	if done && resp.StatusCode == http.StatusUnauthorized {
		resp.Body.Close()
		return nil // another request logged in while this one waited: retry with its token
	}
	if h.cfg.User == nil {
		resp.Body.Close()
		return fmt.Errorf("%w (it answered %d %s); run '%s' on a terminal, then run again",
			ErrLoginNeeded, resp.StatusCode, http.StatusText(resp.StatusCode), shquote.Command([]string{"agenthost", "mcp", "login"}, h.s.spec.Name))
	}
	ln, redirect, err := h.listen()
	if err != nil {
		resp.Body.Close()
		return err
	}
	defer ln.Close()
	h.mu.Lock()
	granted := slices.Clone(h.granted)
	h.mu.Unlock()
	var saved *Login
	var resource string
	acfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			// The SDK names the resource in the authorization request and
			// in the code exchange; the refreshes name the same one.
			if u, err := url.Parse(args.URL); err == nil {
				resource = u.Query().Get("resource")
			}
			return h.fetchCode(ctx, ln, args)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "agenthost",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		Client:              h.hc,
		RequestRefreshToken: true,
		ScopeFilter: func(discovered []string) []string {
			if len(discovered) == 0 {
				discovered = slices.Clone(h.cfg.Scopes)
			}
			for _, g := range granted {
				if !slices.Contains(discovered, g) {
					discovered = append(discovered, g)
				}
			}
			return discovered
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			saved = &Login{ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: int(c.Endpoint.AuthStyle),
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, RedirectURL: c.RedirectURL, Scopes: c.Scopes,
				Resource: resource, Token: tok}
			return h.persisting(saved), nil
		},
	}
	if h.cfg.ClientMetadataURL != "" {
		acfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if h.cfg.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
		acfg.PreregisteredClient = pc
	}
	inner, err := auth.NewAuthorizationCodeHandler(acfg)
	if err != nil {
		resp.Body.Close()
		return err
	}
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return h.s.errorf("MCP server %q: login: %v", h.s.spec.Name, err)
	}
	ts, _ := inner.TokenSource(ctx)
	if ts == nil || saved == nil {
		return nil // a 403 that is no question of scope: the request is retried as it is
	}
	var keepErr error
	if h.cfg.Store != nil {
		if keepErr = h.cfg.Store.Save(h.s.spec.Name, h.s.spec.URL, saved); keepErr != nil {
			h.s.log.Warn().Str("error", keepErr.Error()).Msg("MCP login not saved")
		}
	}
	h.mu.Lock()
	h.ts = ts
	h.granted = saved.Scopes
	h.logins++
	h.keepErr = keepErr
	h.mu.Unlock()
	h.s.log.Info().Strs("scopes", saved.Scopes).Msg("MCP login done")
	return nil
}

// listen opens the loopback listener of a login's redirect URI.
func (h *oauthHandler) listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", h.cfg.RedirectPort))
	if err != nil {
		return nil, "", fmt.Errorf("MCP server %q: login: listening for the browser's redirect on 127.0.0.1:%d: %v", h.s.spec.Name, h.cfg.RedirectPort, err)
	}
	return ln, fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port), nil
}

// fetchCode shows the user the authorization URL and waits, at most
// LoginTimeout (and while ctx lasts), for the browser to come back to the
// loopback redirect with the code.
func (h *oauthHandler) fetchCode(ctx context.Context, ln net.Listener, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
		return nil, fmt.Errorf("the authorization server's authorization endpoint is not an https URL (nor http on loopback): %q", args.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, LoginTimeout)
	defer cancel()
	got := make(chan url.Values, 1)
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxOAuthBody,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/callback" {
				http.NotFound(w, r)
				return
			}
			q := r.URL.Query()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if e := q.Get("error"); e != "" {
				fmt.Fprintf(w, "<p>The login failed: %s. You can close this tab.</p>", html.EscapeString(e))
			} else {
				fmt.Fprint(w, "<p>agenthost is logged in. You can close this tab.</p>")
			}
			select {
			case got <- q:
			default:
			}
		}),
	}
	go srv.Serve(ln)
	defer srv.Close()
	if err := h.cfg.User.OpenLogin(ctx, h.s.spec.Name, args.URL); err != nil {
		return nil, err
	}
	select {
	case q := <-got:
		if e := q.Get("error"); e != "" {
			d := q.Get("error_description")
			return nil, fmt.Errorf("the authorization server refused: %s %s", textcut.Clip(e, 100), textcut.Clip(d, 300))
		}
		if q.Get("code") == "" {
			return nil, errors.New("the browser came back without an authorization code")
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no login within %s (the browser did not come back to agenthost): %w", LoginTimeout, ctx.Err())
	}
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// clientCredentials gets a token by the client credentials grant.
func (h *oauthHandler) clientCredentials(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	if h.cc == nil {
		h.cc = &clientCredentials{h: h}
	}
	cc := h.cc
	h.mu.Unlock()
	if err := cc.Authorize(ctx, req, resp); err != nil {
		return h.s.errorf("MCP server %q: client credentials: %v", h.s.spec.Name, err)
	}
	h.mu.Lock()
	h.logins++
	h.mu.Unlock()
	return nil
}

// persisting is the token source of login l: its token while it is good,
// then refreshed (naming l's resource) and each new token saved to the
// store.
func (h *oauthHandler) persisting(l *Login) oauth2.TokenSource {
	kept := *l
	if kept.Resource == "" {
		kept.Resource = h.s.spec.URL // a login kept before agenthost kept its resource
	}
	c := tokenClient{ID: kept.ClientID, Secret: kept.ClientSecret, TokenURL: kept.TokenURL, Style: oauth2.AuthStyle(kept.AuthStyle)}
	r := &refresher{hc: h.hc, c: c, resource: kept.Resource, refreshToken: kept.Token.RefreshToken}
	return &savingSource{h: h, login: kept, src: oauth2.ReuseTokenSource(kept.Token, r), last: kept.Token.AccessToken}
}

// refresher gets a new token with the refresh token (x/oauth2's own
// refresh sends no resource).
type refresher struct {
	hc           *http.Client
	c            tokenClient
	resource     string
	refreshToken string // ReuseTokenSource makes the calls one at a time
}

func (r *refresher) Token() (*oauth2.Token, error) {
	if r.refreshToken == "" {
		return nil, errors.New("the access token expired and the authorization server gave no refresh token")
	}
	tok, err := tokenRequest(r.hc, r.c, r.resource, nil, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {r.refreshToken},
	})
	if err != nil {
		return nil, err
	}
	r.refreshToken = tok.RefreshToken // the old one when none came
	return tok, nil
}

type savingSource struct {
	h     *oauthHandler
	login Login // Token is the first one
	src   oauth2.TokenSource
	mu    sync.Mutex
	last  string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := tok.AccessToken != s.last
	s.last = tok.AccessToken
	s.mu.Unlock()
	if changed && s.h.cfg.Store != nil {
		l := s.login
		l.Token = tok
		if err := s.h.cfg.Store.Save(s.h.s.spec.Name, s.h.s.spec.URL, &l); err != nil {
			s.h.s.log.Warn().Str("error", err.Error()).Msg("refreshed MCP login not saved")
		} else {
			s.h.s.log.Info().Msg("MCP login refreshed")
		}
	}
	return tok, nil
}

// tokenClient is agenthost as a client of a token endpoint.
type tokenClient struct {
	ID, Secret, TokenURL string
	Style                oauth2.AuthStyle
}

// tokenRequest asks c's token endpoint for a token: the grant and its
// parameters in params, scopes when any, and always resource (RFC 8707),
// the MCP server the token is for, so that the authorization server can
// bind the token to it and another server cannot use it. It is every
// token request agenthost makes itself (refreshes, the client
// credentials grant); the authorization code exchange is the SDK's, which
// names the same resource. x/oauth2's client credentials request serves
// every grant: its EndpointParams may set grant_type.
func tokenRequest(hc *http.Client, c tokenClient, resource string, scopes []string, params url.Values) (*oauth2.Token, error) {
	p := maps.Clone(params)
	p.Set("resource", resource)
	cc := &clientcredentials.Config{ClientID: c.ID, ClientSecret: c.Secret, TokenURL: c.TokenURL, AuthStyle: c.Style, Scopes: scopes, EndpointParams: p}
	return cc.Token(context.WithValue(context.Background(), oauth2.HTTPClient, hc))
}

// clientCredentials is the client credentials grant (RFC 6749 §4.4), the
// client authenticated by its secret or by a JWT it signs with its
// private key (RFC 7523, private_key_jwt: each token request carries a
// new assertion).
type clientCredentials struct {
	h       *oauthHandler
	mu      sync.Mutex
	ts      oauth2.TokenSource
	granted []string // the scopes asked for so far (step-up adds to them)
}

func (c *clientCredentials) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ts, nil
}

func (c *clientCredentials) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, maxOAuthBody))
	cfg, hc := c.h.cfg, c.h.hc
	var key crypto.Signer
	var alg string
	if cfg.PrivateKey != "" {
		var err error
		if key, alg, err = parseSigningKey(cfg.PrivateKey, cfg.SigningAlg); err != nil {
			return err
		}
	}
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, err := resourceMetadata(ctx, challenges, req.URL.String(), hc)
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], hc)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimSuffix(prm.AuthorizationServers[0], "/") + "/token"}
	}
	scopes := scopesOf(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if len(scopes) == 0 {
		scopes = cfg.Scopes
	}
	c.mu.Lock()
	for _, g := range c.granted {
		if !slices.Contains(scopes, g) {
			scopes = append(scopes, g)
		}
	}
	c.mu.Unlock()
	tc := tokenClient{ID: cfg.ClientID, TokenURL: asm.TokenEndpoint, Style: oauth2.AuthStyleInParams}
	if key == nil {
		tc.Secret, tc.Style = cfg.ClientSecret, secretStyle(asm.TokenEndpointAuthMethodsSupported)
	}
	issuer, resource := asm.Issuer, prm.Resource
	src := tokenSourceFunc(func() (*oauth2.Token, error) {
		params := url.Values{"grant_type": {"client_credentials"}}
		if key != nil {
			assertion, err := signAssertion(key, alg, tc.ID, issuer)
			if err != nil {
				return nil, err
			}
			params.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
			params.Set("client_assertion", assertion)
		}
		return tokenRequest(hc, tc, resource, scopes, params)
	})
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("token request: %w", err)
	}
	c.mu.Lock()
	c.ts, c.granted = ts, scopes
	c.mu.Unlock()
	return nil
}

// secretStyle is how a client secret goes to a token endpoint that
// supports methods: in the body (client_secret_post), else in the
// Authorization header (client_secret_basic), else whichever works.
func secretStyle(methods []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// resourceMetadata finds the protected resource metadata of the server at
// serverURL as the MCP specification says: the challenge's
// resource_metadata, then the well-known URIs at the endpoint's path and at
// the root. Without any, the server's origin is its authorization server
// (the 2025-03-26 specification).
func resourceMetadata(ctx context.Context, challenges []oauthex.Challenge, serverURL string, hc *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	type cand struct{ meta, resource string }
	var cands []cand
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			cands = append(cands, cand{m, serverURL})
			break
		}
	}
	mu := *ru
	mu.RawQuery = ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	cands = append(cands, cand{mu.String(), serverURL})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery = "", ""
	cands = append(cands, cand{mu.String(), root.String()})
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.meta, c.resource, hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: serverURL}, nil
}

func scopesOf(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// parseSigningKey reads a PEM private key (PKCS#8, SEC 1 or PKCS#1) and
// the JWS algorithm it signs with.
func parseSigningKey(pemText, alg string) (crypto.Signer, string, error) {
	b, _ := pem.Decode([]byte(pemText))
	if b == nil {
		return nil, "", errors.New("private_key is not a PEM private key")
	}
	var key any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("private_key: %v", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		want := map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
		if alg == "" {
			alg = want
		}
		if alg != want {
			return nil, "", fmt.Errorf("private_key is an EC key of %s, which signs with %s, not %s", k.Curve.Params().Name, want, alg)
		}
		return k, alg, nil
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" {
			return nil, "", fmt.Errorf("private_key is an RSA key: agenthost signs with RS256 only, not %s", alg)
		}
		return k, alg, nil
	}
	return nil, "", fmt.Errorf("private_key is a %T: agenthost signs with EC (ES256, ES384, ES512) or RSA (RS256) keys", key)
}

// signAssertion makes the client's JWT for the token endpoint of issuer:
// issued by and about the client, for the issuer, valid 5 minutes.
func signAssertion(key crypto.Signer, alg, clientID, issuer string) (string, error) {
	now := time.Now()
	hdr, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID, "sub": clientID, "aud": issuer,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(hdr) + "." + enc.EncodeToString(claims)
	var hash crypto.Hash
	switch alg {
	case "ES256", "RS256":
		hash = crypto.SHA256
	case "ES384":
		hash = crypto.SHA384
	case "ES512":
		hash = crypto.SHA512
	}
	hf := hash.New()
	hf.Write([]byte(signing))
	digest := hf.Sum(nil)
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return "", err
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		sig = make([]byte, 2*n)
		r.FillBytes(sig[:n])
		s.FillBytes(sig[n:])
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, hash, digest); err != nil {
			return "", err
		}
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// Login logs in to the server anew, whatever login there was: it connects,
// and the server's 401 starts the login (the authorization code grant
// through User's browser, or the client credentials grant). It reports
// whether a token was got: false when the server asked for none.
func (s *Server) Login(ctx context.Context) (bool, error) {
	if s.oauth == nil {
		return false, fmt.Errorf("MCP server %q is not a url server with OAuth", s.spec.Name)
	}
	s.oauth.forget()
	if _, _, err := s.session(ctx); err != nil {
		return false, err
	}
	s.oauth.mu.Lock()
	n, keepErr := s.oauth.logins, s.oauth.keepErr
	s.oauth.mu.Unlock()
	if keepErr != nil {
		return true, fmt.Errorf("MCP server %q: logged in, but the login could not be kept, so the next start would ask again: %w", s.spec.Name, keepErr)
	}
	return n > 0, nil
}
