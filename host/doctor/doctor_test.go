package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/fakemodel"
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
