package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/mcpserve"
)

// TestCheckListenAddr: without a token only loopback addresses are served;
// with one, any host:port is (the token is the protection).
func TestCheckListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:8808", false, true},
		{"127.0.0.1:0", false, true},
		{"[::1]:8808", false, true},
		{"localhost:8808", false, true},
		{"127.1.2.3:80", false, true},
		{"0.0.0.0:8808", false, false},
		{":8808", false, false},
		{"[::]:8808", false, false},
		{"192.168.1.2:8808", false, false},
		{"example.com:8808", false, false},
		{"0.0.0.0:8808", true, true},
		{"example.com:8808", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1", true, false},
	} {
		err := checkListenAddr(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("checkListenAddr(%q, token=%v) = %v, want ok=%v", c.addr, c.token, err, c.ok)
		}
	}
}

// TestMCPHandlerRefuses: the HTTP handler refuses a request without the
// bearer token (401) and a cross-origin browser request even with it (403);
// a right token without an origin reaches the MCP handler.
func TestMCPHandlerRefuses(t *testing.T) {
	srv := &mcpserve.Server{Server: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)}
	nop := zerolog.Nop()
	h := mcpHandler(srv, "tok", defaultHTTPLimits, &nop)
	const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`
	do := func(auth, site string) int {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8808/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
			r.Header.Set("Origin", "https://evil.example")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		auth, site string
		want       int
	}{
		{"", "", http.StatusUnauthorized},
		{"Bearer nope", "", http.StatusUnauthorized},
		{"tok", "", http.StatusUnauthorized},
		{"Bearer tok", "cross-site", http.StatusForbidden},
		{"Bearer tok", "", http.StatusOK},
	} {
		if got := do(c.auth, c.site); got != c.want {
			t.Errorf("Authorization %q, Sec-Fetch-Site %q: status %d, want %d", c.auth, c.site, got, c.want)
		}
	}
}
