package extism

import "net/url"

// Allowlist checks an http allow list as the http block of agents.hcl has
// it (origins scheme://host[:port], a host may start with "*.") and returns
// the test of a URL against it, for other kinds that share the grant (WASI
// 0.2 components' wasi:http). The error names the bad entry.
func Allowlist(entries []string) (func(*url.URL) bool, error) {
	a, err := parseAllow(entries)
	if err != nil {
		return nil, err
	}
	return a.allows, nil
}
