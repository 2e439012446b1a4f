package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"},
		{"http://user:pass@host/v1", "http://REDACTED@host/v1"},
		{"http://user@host/v1", "http://REDACTED@host/v1"},
		{"https://h/openai/v1?api-version=2024-06-01&api-key=SECRET", "https://h/openai/v1?api-version=REDACTED&api-key=REDACTED"},
		{"https://h/v1?sk-bare-token", "https://h/v1?REDACTED"},
		{"https://u:p%40ss@h/v1/chat/completions?k=a%2Bb#frag", "https://REDACTED@h/v1/chat/completions?k=REDACTED#frag"},
		// not a URL at all: masked by position
		{"http://user:pass@ho st/v1?key=SECRET", "http://REDACTED@ho st/v1?REDACTED"},
		{"http://us%zzer:pass@host", "http://REDACTED@host"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReplacer(t *testing.T) {
	base := "http://alice:s3cr%2Ft@host/v1?api-key=SECRET&v=1&tok"
	r := NewReplacer(Secrets(base)...)
	for _, tc := range []struct{ in, want string }{
		// as written, unescaped and re-escaped
		{`Post "http://alice:s3cr%2Ft@host/v1/chat/completions?api-key=SECRET&v=1": EOF`, `Post "http://REDACTED:REDACTED@host/v1/chat/completions?api-key=REDACTED&v=1": EOF`},
		{"password s3cr/t rejected", "password REDACTED rejected"},
		{"Cannot POST /v1/chat/completions?api-key=SECRET", "Cannot POST /v1/chat/completions?api-key=REDACTED"},
		// values shorter than MinSecret are not scrubbed from free text
		{"tok: 1 of 1", "tok: 1 of 1"},
	} {
		if got := r.Replace(tc.in); got != tc.want {
			t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *Replacer
	if got := none.Replace("x SECRET"); got != "x SECRET" {
		t.Errorf("nil Replacer changed the text: %q", got)
	}
	if got := NewReplacer("abc").Replace("abc"); got != "abc" {
		t.Errorf("a 3-byte secret was scrubbed: %q", got)
	}
}

// TestReplacerLongestFirst: a secret containing another is masked whole.
func TestReplacerLongestFirst(t *testing.T) {
	r := NewReplacer("SECRET", "SECRETSECRET2")
	if got := r.Replace("k=SECRETSECRET2"); got != "k="+Mask {
		t.Errorf("got %q", got)
	}
	if strings.Contains(r.Replace("SECRET and SECRETSECRET2"), "SECRET ") {
		t.Errorf("a secret survived")
	}
}

// TestURLReplacer: the URL quoted whole in a message (as written, or as
// net/http quotes it, password "***") reads as URL writes it; its
// credentials and the other secrets elsewhere are masked.
func TestURLReplacer(t *testing.T) {
	raw := "http://alice:topsecretpw@127.0.0.1:9000/mcp?api_key=SECRETKEY"
	r := NewURLReplacer(raw, HeaderSecrets(map[string]string{"Authorization": "Bearer tok-123456", "Accept": "text/plain"})...)
	for _, tc := range []struct{ in, want string }{
		{`Post "` + raw + `": EOF`, `Post "http://REDACTED@127.0.0.1:9000/mcp?api_key=REDACTED": EOF`},
		{`Post "http://alice:***@127.0.0.1:9000/mcp?api_key=SECRETKEY": EOF`, `Post "http://REDACTED@127.0.0.1:9000/mcp?api_key=REDACTED": EOF`},
		{"user alice, key SECRETKEY, token tok-123456", "user REDACTED, key REDACTED, token REDACTED"},
		{"Accept: text/plain", "Accept: text/plain"},
	} {
		if got := r.Replace(tc.in); got != tc.want {
			t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := NewURLReplacer("http://127.0.0.1:9000/mcp").Replace("http://127.0.0.1:9000/mcp"); got != "http://127.0.0.1:9000/mcp" {
		t.Errorf("a URL without credentials changed: %q", got)
	}
}
