package mcpuse

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/mcptest"
)

// transports runs f against the test server over each transport: stdio,
// streamable HTTP answering with event streams (sse), and with JSON bodies
// (json).
func transports(t *testing.T, spec Spec, f func(t *testing.T, s *Server)) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []string{"stdio", "sse", "json"} {
		t.Run(tr, func(t *testing.T) {
			spec := spec
			spec.Name = "test"
			if tr == "stdio" {
				spec.Command = []string{exe}
				spec.Env = map[string]string{"MCPUSE_SERVER": "tools"}
			} else {
				hs, err := mcptest.StartHTTPWith(mcptest.HTTPOptions{JSON: tr == "json"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { hs.Close() })
				spec.URL = hs.URL
			}
			s := New(spec, zerolog.Nop())
			t.Cleanup(func() { s.Close() })
			f(t, s)
		})
	}
}

// TestBigResultCut: a result far over max_output (20 MiB of text, over
// the SDK's own 16 MiB bound on a line or an event) is cut as it streams
// in, and the call gets max_output bytes and the note a plugin's output
// gets, stating the full length; the server is fine for the next call.
// With a smaller max_output, several texts are joined and cut the same way.
func TestBigResultCut(t *testing.T) {
	transports(t, Spec{Timeout: 30 * time.Second}, func(t *testing.T, s *Server) {
		const n = 20 << 20
		res := call(t, s, "big", fmt.Sprintf(`{"n":%d}`, n))
		want := strings.Repeat("x", 1<<20) + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", 1<<20, n)
		if res.IsError || res.Content != want {
			t.Errorf("big: isError %v, %d bytes ending %q; want %d bytes ending %q", res.IsError, len(res.Content), tail(res.Content), len(want), tail(want))
		}
		if r := call(t, s, "echo", `{"text":"after"}`); r.IsError || r.Content != `echo: "text":"after"` {
			t.Errorf("echo after: %+v", r)
		}
	})
	transports(t, Spec{Timeout: 30 * time.Second, MaxOutput: 1000}, func(t *testing.T, s *Server) {
		res := call(t, s, "many", `{"n":3,"size":600}`)
		want := strings.Repeat("m", 600) + "\n" + strings.Repeat("m", 399) + "\n[output truncated: 1000 of 1802 bytes shown]"
		if res.IsError || res.Content != want {
			t.Errorf("many: isError %v, %q", res.IsError, res.Content)
		}
	})
}

func tail(s string) string { return s[max(0, len(s)-60):] }

// TestMessageTooBig: a message still over the limit once its strings are
// cut (20000 texts of 1000 bytes: 20 MB for a 16 MiB limit) gives an error
// result that says so, and the next call works (on the same connection, or
// on the restarted server when the connection ended).
func TestMessageTooBig(t *testing.T) {
	transports(t, Spec{Timeout: 30 * time.Second}, func(t *testing.T, s *Server) {
		res := call(t, s, "many", `{"n":20000,"size":1000}`)
		if !res.IsError || !strings.Contains(res.Content, "MCP message too big: the server sent more than 16MiB in one message") {
			t.Errorf("many: isError %v, %q", res.IsError, res.Content)
		}
		if r := call(t, s, "echo", `{"text":"after"}`); r.IsError || r.Content != `echo: "text":"after"` {
			t.Errorf("echo after: %+v", r)
		}
	})
}

// TestRedirectToOtherOrigin: an HTTP server answering 307 to another
// origin (another port) does not get the block's headers there: the
// redirect is refused, with an error saying what to do, and the other
// origin receives nothing. The headers never go to another origin, even
// on a request made there directly. A redirect within the origin is
// followed, headers included.
func TestRedirectToOtherOrigin(t *testing.T) {
	var mu sync.Mutex
	var got []string // the requests the other origin received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s Authorization=%q X-Api-Key=%q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	headers := map[string]string{"Authorization": "Bearer s3cret-token", "X-Api-Key": "k3y-value"}

	s := New(Spec{Name: "test", URL: redirector.URL + "/mcp", Headers: headers, Timeout: 10 * time.Second}, zerolog.Nop())
	defer s.Close()
	_, err := s.Tools(context.Background())
	want := fmt.Sprintf("redirected to %s/mcp, another origin than the url's (%s): agenthost follows redirects within the url's origin only", other.URL, redirector.URL)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Tools: %v; want an error saying %q", err, want)
	}
	// Whatever makes a request to another origin, the headers stay home.
	req, _ := http.NewRequest(http.MethodGet, other.URL+"/direct", nil)
	if resp, err := s.http.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	mu.Lock()
	for _, g := range got {
		if strings.Contains(g, "s3cret-token") || strings.Contains(g, "k3y-value") {
			t.Errorf("the other origin received the headers: %s", g)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "GET /direct") {
		t.Errorf("the other origin received %q, want only the direct GET", got)
	}
	mu.Unlock()

	// Within the origin: /old answers 307 to /mcp, a proxy to the test
	// server, whose header tool shows what arrived.
	hs, err := mcptest.StartHTTP("", "")
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	target, _ := url.Parse(hs.URL)
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer same.Close()
	s2 := New(Spec{Name: "test", URL: same.URL + "/old", Headers: headers, Timeout: 10 * time.Second}, zerolog.Nop())
	defer s2.Close()
	if r := call(t, s2, "header", `{"name":"Authorization"}`); r.IsError || r.Content != "Authorization: Bearer s3cret-token" {
		t.Errorf("same-origin redirect: %+v", r)
	}
}

// TestURLCredentialsRedacted: the url's user info and query values, and
// the values of credential headers, appear in no message of a server, be
// it a failed start (what validate prints), a failed call (what the model
// reads and the session stores) or the log: REDACTED stands in for them.
func TestURLCredentialsRedacted(t *testing.T) {
	secrets := []string{"alice", "topsecretpw", "SECRETKEY", "s3cret-token"}
	check := func(where, text string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("%s has %q: %s", where, sec, text)
			}
		}
	}
	var logs strings.Builder
	log := zerolog.New(&lockedWriter{w: &logs})
	headers := map[string]string{"Authorization": "Bearer s3cret-token"}

	// Nothing listens on port 1: the start fails, quoting the URL.
	s := New(Spec{Name: "test", URL: "http://alice:topsecretpw@127.0.0.1:1/mcp?api_key=SECRETKEY", Headers: headers, Timeout: 10 * time.Second}, log)
	_, err := s.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "REDACTED") {
		t.Errorf("Tools: %v; want an error with the URL redacted", err)
	} else {
		check("the start error", err.Error())
	}
	// The restart is logged with the cause; after it, the server is given
	// up with the cause too.
	for range 2 {
		res := call(t, s, "echo", `{"text":"x"}`)
		if !res.IsError || !strings.Contains(res.Content, "REDACTED") {
			t.Errorf("echo: %+v; want an error result with the URL redacted", res)
		}
		check("the error result", res.Content)
	}
	s.Close()

	// A call whose connection is dropped: net/http's error quotes the URL.
	hs, err := mcptest.StartHTTP("", "")
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	u := strings.Replace(hs.URL, "http://", "http://alice:topsecretpw@", 1) + "?api_key=SECRETKEY"
	s = New(Spec{Name: "test", URL: u, Headers: headers, Timeout: 10 * time.Second}, log)
	defer s.Close()
	res := call(t, s, "drop", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "REDACTED") {
		t.Errorf("drop: %+v; want an error result with the URL redacted", res)
	}
	check("the error result", res.Content)
	res = call(t, s, "echo", `{"text":"after"}`) // on the restarted server
	if res.IsError {
		t.Errorf("echo after: %+v", res)
	}
	s.Close()
	check("the log", logs.String())
	if !strings.Contains(logs.String(), `"cause":"`) || !strings.Contains(logs.String(), "REDACTED") {
		t.Errorf("the log has no restart with its cause: %s", logs.String())
	}
}
