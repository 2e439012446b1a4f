package sandbox

import (
	"net/url"
	"testing"
)

// TestAllowlistParse: origins match by scheme, host (a leading "*." for
// subdomains) and port; anything but an origin is refused.
func TestAllowlistParse(t *testing.T) {
	a, err := ParseAllowlist([]string{"https://api.github.com", "http://127.0.0.1:8080", "https://*.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"https://api.github.com/repos":      true,
		"https://api.github.com:443/":       true,
		"http://api.github.com/":            false,
		"https://api.github.com.evil.com/":  false,
		"http://127.0.0.1:8080/x":           true,
		"http://127.0.0.1:8081/x":           false,
		"http://127.0.0.1/x":                false,
		"https://a.example.com/":            true,
		"https://a.b.example.com/":          true,
		"https://example.com/":              false,
		"https://evilexample.com/":          false,
		"ftp://api.github.com/":             false,
		"https://user@api.github.com/path":  true,
		"https://API.GITHUB.COM/uppercase":  true,
		"https://api.github.com@evil.com/x": false,
	} {
		if got := a.Allows(mustURL(t, u)); got != want {
			t.Errorf("Allows(%s) = %v, want %v", u, got, want)
		}
	}
	for _, bad := range []string{"api.github.com", "https://api.github.com/path", "https://*", "https://a.*.com", "file:///etc", "https://x.com?q=1"} {
		if _, err := ParseAllowlist([]string{bad}); err == nil {
			t.Errorf("ParseAllowlist(%q) accepted", bad)
		}
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
