package doctor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/provider"
	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/loop"
)

// A server whose certificate is not trusted fails the tls check, timed,
// with the fix, and the checks stop there; the key never shows.
func TestCheckModelTLSUntrusted(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server: %s", r.URL)
	}))
	defer srv.Close()
	p := &config.Provider{Name: "p", BaseURL: srv.URL + "/v1?api-key=sekrit99", APIKey: "sk-abcdef"}
	rep := CheckModel(context.Background(), p, &config.Model{Name: "m", ID: "x"})
	if rep.OK() {
		t.Fatalf("report OK against an untrusted certificate: %+v", rep)
	}
	last := rep.Checks[len(rep.Checks)-1]
	if last.Name != "tls" || last.Status != Fail || !strings.Contains(last.Hint, "not trusted") || last.MS <= 0 {
		t.Errorf("last check = %+v, want a timed tls failure with a hint", last)
	}
	if strings.Contains(rep.BaseURL, "sekrit99") || !strings.Contains(rep.BaseURL, "REDACTED") {
		t.Errorf("base_url not redacted: %s", rep.BaseURL)
	}
	for _, c := range rep.Checks {
		if strings.Contains(c.Detail+c.Hint, "sekrit99") || strings.Contains(c.Detail+c.Hint, "sk-abcdef") {
			t.Errorf("check %s shows a credential: %+v", c.Name, c)
		}
	}
}

func TestSuffixHint(t *testing.T) {
	for base, want := range map[string]string{
		"http://h:1":                      `try "http://h:1/v1"`,
		"http://h:1/v1/chat/completions":  `agenthost adds /chat/completions: try "http://h:1/v1"`,
		"http://u:pw@h:1/api":             `try "http://REDACTED@h:1/api/v1"`,
		"https://x/openai/deployments/d/": "check base_url's path",
	} {
		if got := suffixHint(base); !strings.Contains(got, want) {
			t.Errorf("suffixHint(%q) = %q, want it to contain %q", base, got, want)
		}
	}
}

// By name, the dns check resolves the host, timed; then every check passes
// against a server that does it all.
func TestCheckModelByName(t *testing.T) {
	replies, err := fakemodel.ParseScript([]byte(`{"text": "OK"}
{"tool_calls": [{"name": "ping", "arguments": {}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakemodel.Start(replies)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetModels(0, "m1")
	base := strings.Replace(srv.URL(), "127.0.0.1", "localhost", 1)
	rep := CheckModel(context.Background(), &config.Provider{Name: "p", BaseURL: base}, &config.Model{Name: "m", ID: "m1"})
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name+"="+string(c.Status))
	}
	want := "dns=ok tcp=ok tls=skip models=ok auth=ok completion=ok streaming=ok tool call=ok"
	if strings.Join(names, " ") != want {
		t.Fatalf("checks %s, want %s\n%+v", strings.Join(names, " "), want, rep.Checks)
	}
	if d := rep.Checks[0]; !strings.HasPrefix(d.Detail, "localhost → ") || d.MS <= 0 {
		t.Errorf("dns check %+v", d)
	}
	if !rep.OK() {
		t.Errorf("report not OK")
	}
}

// TestHint: the advice for a failed request comes from what really failed,
// against real servers on loopback: the same text doctor's checks give
// and run prints under its error.
func TestHint(t *testing.T) {
	start := func(t *testing.T, script string) *fakemodel.Server {
		t.Helper()
		replies, err := fakemodel.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := fakemodel.Start(replies)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		return srv
	}
	refused := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr + "/v1"
	}
	hint := func(t *testing.T, p *config.Provider, m *config.Model) string {
		t.Helper()
		model := provider.New(provider.Options{BaseURL: p.BaseURL, APIKey: p.APIKey, ModelID: m.ID})
		_, err := model.Stream(context.Background(), loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "hi"}}}, nil)
		if err == nil {
			t.Fatal("the request did not fail")
		}
		return Hint(p, m, err)
	}
	m := &config.Model{Name: "m", ID: "qwen"}
	cases := []struct {
		name string
		run  func(t *testing.T) string
		want string // "" for no hint
	}{
		{"refused", func(t *testing.T) string {
			base := refused(t)
			return hint(t, &config.Provider{Name: "p", BaseURL: base}, m) + " " + base
		}, `^is the server running and listening on (127\.0\.0\.1:\d+)\? \(Ollama: ollama serve; llama\.cpp: llama-server --port \d+\) http://(127\.0\.0\.1:\d+)/v1$`},
		{"no /v1", func(t *testing.T) string {
			srv := start(t, `{"text": "never"}`)
			return hint(t, &config.Provider{Name: "p", BaseURL: "http://" + srv.Addr()}, m)
		}, `^base_url usually ends in /v1 \(the API root\): try "http://127\.0\.0\.1:\d+/v1"$`},
		{"model not pulled, name from a variable", func(t *testing.T) string {
			srv := start(t, `{"status": 404, "body": {"error": {"message": "model \"qwen\" not found, try pulling it first"}}}`)
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL()}, &config.Model{Name: "m", ID: "qwen", IDEnv: []string{"AGENTHOST_MODEL"}})
		}, `^the server does not have model "qwen" \(its name comes from \$AGENTHOST_MODEL\): pull it \(Ollama: ollama pull qwen\)`},
		{"key missing, from a variable", func(t *testing.T) string {
			srv := start(t, `{"text": "never"}`)
			srv.RequireKey("sk-right")
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL(), APIKeyEnv: []string{"MY_KEY"}}, m)
		}, `^the server wants an API key: api_key of provider "p" is empty \(\$MY_KEY is not set\)$`},
		{"key missing", func(t *testing.T) string {
			srv := start(t, `{"text": "never"}`)
			srv.RequireKey("sk-right")
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL()}, m)
		}, `^the server wants an API key: set api_key in provider "p"`},
		{"key refused, from a variable", func(t *testing.T) string {
			srv := start(t, `{"text": "never"}`)
			srv.RequireKey("sk-right")
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL(), APIKey: "sk-wrong", APIKeyEnv: []string{"A", "B"}}, m)
		}, `^the server refused the API key of provider "p" \(api_key, from \$A or \$B\): check it`},
		{"no tools", func(t *testing.T) string {
			srv := start(t, `{"status": 400, "body": {"error": {"message": "registry.ollama.ai/library/qwen does not support tools"}}}`)
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL()}, m)
		}, `^the server or model does not do tool calls`},
		{"another 400", func(t *testing.T) string {
			srv := start(t, `{"status": 400, "body": {"error": {"message": "bad request"}}}`)
			return hint(t, &config.Provider{Name: "p", BaseURL: srv.URL()}, m)
		}, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.run(t)
			if c.want == "" {
				if got != "" {
					t.Errorf("hint %q, want none", got)
				}
				return
			}
			mm := regexp.MustCompile(c.want).FindStringSubmatch(got)
			if mm == nil {
				t.Errorf("hint %q does not match %s", got, c.want)
			} else if len(mm) == 3 && mm[1] != mm[2] {
				t.Errorf("hint names %s, base_url is at %s", mm[1], mm[2])
			}
		})
	}
	if h := Hint(&config.Provider{Name: "p", BaseURL: "http://h/v1"}, m, errors.New("not a provider error")); h != "" {
		t.Errorf("hint for an unknown error: %q", h)
	}
}
