package sandbox

import (
	"net/url"
	"testing"
)

// TestRefusedNamesTheOrigin: the message of a refused request names the
// origin as an allow entry is written (no default port, host in lower
// case, IPv6 in brackets), which ParseAllowlist accepts and then allows.
func TestRefusedNamesTheOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.example.org/v1?key=s": "https://api.example.org",
		"https://api.example.org:443/":     "https://api.example.org",
		"http://127.0.0.1:8080/x":          "http://127.0.0.1:8080",
		"http://[::1]:80/x":                "http://[::1]",
		"http://[::1]:9000/x":              "http://[::1]:9000",
		"https://example.org:8443/a#b":     "https://example.org:8443",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		e := Refused(u, "shown", false)
		if e.Origin != want {
			t.Errorf("%s: origin %q, want %q", raw, e.Origin, want)
		}
		a, err := ParseAllowlist([]string{e.Origin})
		if err != nil || !a.Allows(u) {
			t.Errorf("%s: the named origin %q does not allow it (%v)", raw, e.Origin, err)
		}
	}
	got := Refused(&url.URL{Scheme: "https", Host: "x.org"}, "https://x.org/p?k=***", true).Error()
	want := `HTTP redirect to https://x.org/p?k=*** refused: its origin is not in the plugin's http allow list (add "https://x.org" to http { allow = [...] } in the plugin block if it is trusted)`
	if got != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}
}
