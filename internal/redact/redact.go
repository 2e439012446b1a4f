// Package redact hides credentials carried in URLs and in text that may
// quote them. It is a leaf: host/config uses it in diagnostics, the
// provider adapter in every error message, log field and event it produces.
//
// A base_url may carry credentials in two places: the userinfo
// ("http://user:password@host/v1") and the query ("?api-key=..."). URL
// replaces both with Mask, whole userinfo and every query value, keeping the
// query keys so that a reader still sees which parameters were sent.
// Secrets finds the same values so that a Replacer can scrub them from text
// the host did not format itself (a library's error, a server echoing the
// request line in its error page).
package redact

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Mask stands for a hidden value.
const Mask = "REDACTED"

// MinSecret is the shortest value a Replacer scrubs from free text: shorter
// ones would garble unrelated words and digits. URL hides them all the
// same.
const MinSecret = 4

// URL returns raw with its userinfo and query values replaced by Mask. A
// string that does not parse as a URL is returned with everything after
// the scheme's "//" up to the last "@" and everything after the first "?"
// masked, so that even a malformed base_url is safe to print.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fallback(raw)
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	q := u.RawQuery
	u.RawQuery = ""
	s := u.String()
	if q != "" || u.ForceQuery {
		s = insertQuery(s, Query(q))
	}
	return s
}

// insertQuery puts "?"+q into s before its fragment, if any.
func insertQuery(s, q string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i] + "?" + q + s[i:]
	}
	return s + "?" + q
}

// Query masks every value of a raw query string, keeping keys and order:
// "api-version=2024-06-01&api-key=k" becomes
// "api-version=REDACTED&api-key=REDACTED". An item without "=" may be a
// bare token and is masked whole.
func Query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + Mask
		} else if p != "" {
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

func fallback(raw string) string {
	s := raw
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "?" + Mask
	}
	start := 0
	if i := strings.Index(s, "//"); i >= 0 {
		start = i + 2
	}
	if at := strings.LastIndexByte(s[start:], '@'); at >= 0 {
		s = s[:start] + Mask + s[start+at:]
	}
	return s
}

// Secrets returns the credential values raw carries: the username and
// password, every query value (and bare query item), as written and
// unescaped. Parse failures yield nothing (a malformed URL is never used
// for a request).
func Secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	// The raw (still escaped) values too: an error quoting the URL
	// quotes them as they were written.
	for _, p := range strings.Split(u.RawQuery, "&") {
		if _, v, ok := strings.Cut(p, "="); ok {
			out = append(out, v)
		} else {
			out = append(out, p)
		}
	}
	if u.User != nil {
		ui := u.User.String() // escaped form
		name, pass, _ := strings.Cut(ui, ":")
		out = append(out, name, pass)
	}
	return out
}

// HeaderSecrets returns the values of the headers whose name says they
// carry a credential (it holds auth, key, token, secret, cookie or
// password: Authorization, api-key, X-Auth-Token ...), each also without
// a "Bearer " in front.
func HeaderSecrets(h map[string]string) []string {
	var out []string
	for k, v := range h {
		k = strings.ToLower(k)
		for _, w := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
			if strings.Contains(k, w) {
				out = append(out, v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
				break
			}
		}
	}
	return out
}

// Replacer scrubs secrets from text. The zero value and nil scrub nothing.
type Replacer struct {
	r *strings.Replacer
}

// NewReplacer returns a Replacer for secrets, each also matched in its
// query-escaped and path-escaped forms. Secrets shorter than MinSecret are
// ignored; longer ones are matched first, so a secret containing another is
// masked whole.
func NewReplacer(secrets ...string) *Replacer { return newReplacer(nil, secrets) }

// NewURLReplacer is NewReplacer for the credentials of the URL raw
// (Secrets) and more secrets, which also writes raw itself, where it
// appears whole, as URL does: as written, and as net/http quotes it in
// its errors (the password as "***").
func NewURLReplacer(raw string, secrets ...string) *Replacer {
	var pairs []string
	if u, err := url.Parse(raw); err == nil && (u.User != nil || u.RawQuery != "") {
		shown := URL(raw)
		forms := []string{raw, u.String()}
		if _, ok := u.User.Password(); ok { // net/http's stripPassword
			forms = append(forms, strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
		}
		for _, form := range forms {
			if !slices.Contains(pairs, form) {
				pairs = append(pairs, form, shown)
			}
		}
	}
	return newReplacer(pairs, append(Secrets(raw), secrets...))
}

// newReplacer replaces the old, new pairs first, then the secrets.
func newReplacer(pairs, secrets []string) *Replacer {
	seen := map[string]bool{}
	var list []string
	add := func(s string) {
		if len(s) >= MinSecret && !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	for _, s := range secrets {
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
	}
	if len(list) == 0 && len(pairs) == 0 {
		return &Replacer{}
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	for _, s := range list {
		pairs = append(pairs, s, Mask)
	}
	return &Replacer{r: strings.NewReplacer(pairs...)}
}

// Replace returns s with every secret replaced by Mask.
func (r *Replacer) Replace(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
