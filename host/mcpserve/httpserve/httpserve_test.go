package httpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/mcpserve"
)

// TestMCPHandlerRefuses: the HTTP handler refuses a request without the
// bearer token (401) and a cross-origin browser request even with it (403);
// a right token without an origin reaches the MCP handler.
func TestMCPHandlerRefuses(t *testing.T) {
	srv := &mcpserve.Server{Server: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)}
	nop := zerolog.Nop()
	h := NewHandler(srv, "tok", DefaultLimits(), &nop)
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
