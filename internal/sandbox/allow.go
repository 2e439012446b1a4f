package sandbox

import (
	"fmt"
	"net/url"
	"strings"
)

// Allowlist is the http grant of a plugin block: the origins
// (scheme://host[:port]) its guest may reach, through Extism's
// http_request or a component's wasi:http alike. A host may start with
// "*." to allow its subdomains (not the domain itself).
type Allowlist struct {
	exact    map[string]bool // "scheme://host:port"
	suffixes []struct{ scheme, suffix, port string }
}

// ParseAllowlist checks an http allow list as the http block of
// agents.hcl has it; the error names the bad entry.
func ParseAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{exact: map[string]bool{}}
	for _, e := range entries {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("http allow entry %q must be an origin, scheme://host[:port] with scheme http or https, like \"https://api.github.com\"", e)
		}
		host, port := strings.ToLower(u.Hostname()), u.Port()
		if port == "" {
			port = defaultPort(u.Scheme)
		}
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			if rest == "" || strings.Contains(rest, "*") {
				return nil, fmt.Errorf("http allow entry %q: a wildcard is only allowed as a leading \"*.\" before a domain", e)
			}
			a.suffixes = append(a.suffixes, struct{ scheme, suffix, port string }{u.Scheme, "." + rest, port})
			continue
		}
		if strings.Contains(host, "*") {
			return nil, fmt.Errorf("http allow entry %q: a wildcard is only allowed as a leading \"*.\" before a domain", e)
		}
		a.exact[u.Scheme+"://"+host+":"+port] = true
	}
	return a, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// Allows reports whether u's origin is on the list; a nil list allows
// nothing.
func (a *Allowlist) Allows(u *url.URL) bool {
	if a == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	if a.exact[u.Scheme+"://"+host+":"+port] {
		return true
	}
	for _, s := range a.suffixes {
		if s.scheme == u.Scheme && s.port == port && strings.HasSuffix(host, s.suffix) {
			return true
		}
	}
	return false
}

// Origin is u's origin as an allow list entry names it: scheme://host,
// with the port only when it is not the scheme's default.
func Origin(u *url.URL) string {
	host := strings.ToLower(u.Host)
	if p := u.Port(); p == defaultPort(u.Scheme) {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host
}

// RefusedError is a request, or a redirect, outside a plugin's allow
// list, worded for the model and the person alike: the URL (redacted:
// a presigned URL's signature is in its query) and the origin to allow.
type RefusedError struct {
	URL      string
	Origin   string
	Redirect bool
}

// Refused is the RefusedError of u; shown is u as it may be printed.
func Refused(u *url.URL, shown string, redirect bool) *RefusedError {
	return &RefusedError{URL: shown, Origin: Origin(u), Redirect: redirect}
}

func (e *RefusedError) Error() string {
	what := "request"
	if e.Redirect {
		what = "redirect"
	}
	return fmt.Sprintf("HTTP %s to %s refused: its origin is not in the plugin's http allow list (add %q to http { allow = [...] } in the plugin block if it is trusted)", what, e.URL, e.Origin)
}
