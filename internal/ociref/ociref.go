// Package ociref is the oci:// plugin source of agents.hcl: how a
// reference to a plugin in an OCI registry is written, and the transport
// rule for it. host/config checks a source with it before anything is
// contacted, with a located error; host/plugin's registry client
// (host/plugin/internal/ociget) reads the same Ref and applies the same
// rule again, so the rule is written once. It parses only: it opens no
// connection and resolves no name.
package ociref

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync"
)

// The schemes of a registry source. oci:// talks TLS to the registry,
// except to a registry on this machine (loopback), which it talks plain
// HTTP to, as Docker does for localhost; oci+http:// says plain HTTP
// outright, which off loopback needs insecure = true in the block.
const (
	Scheme      = "oci://"
	PlainScheme = "oci+http://"
)

// Ref is a parsed registry source:
// oci://HOST[:PORT]/REPO:TAG, oci://HOST[:PORT]/REPO@sha256:HEX or
// oci://HOST[:PORT]/REPO:TAG@sha256:HEX (the digest decides; the tag is
// kept for messages).
type Ref struct {
	Registry   string // HOST[:PORT]
	Repository string // REPO, lowercase path components
	Tag        string // "" when only a digest is given
	Digest     string // "sha256:" and 64 lowercase hex digits, or ""
	// Plain is set when the source is written oci+http://.
	Plain bool
}

// IsOCI reports whether source is written as a registry source (either
// scheme), so that Parse, not a file path, decides it.
func IsOCI(source string) bool {
	return strings.HasPrefix(source, Scheme) || strings.HasPrefix(source, PlainScheme)
}

// grammar is the grammar of the OCI distribution specification: a
// repository's path components, a tag, a digest, a host. Compiled on the
// first registry source, not at every start: every command links this
// package through host/config, and the counted repetitions make large
// programs.
var grammar = sync.OnceValue(func() (g struct{ repo, tag, digest, host *regexp.Regexp }) {
	g.repo = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)
	g.tag = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)
	g.digest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	g.host = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$`)
	return g
})

// Parse reads a registry source. Its error says what is wrong with it and
// how the source is written.
func Parse(source string) (Ref, error) {
	var r Ref
	rest, ok := strings.CutPrefix(source, Scheme)
	if !ok {
		if rest, ok = strings.CutPrefix(source, PlainScheme); !ok {
			return r, fmt.Errorf("%q is not a registry source (oci://HOST/REPO:TAG)", source)
		}
		r.Plain = true
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok || host == "" || path == "" {
		return r, fmt.Errorf("%q names no repository: write oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:DIGEST", source)
	}
	if err := checkHost(host); err != nil {
		return r, fmt.Errorf("%q: %v", source, err)
	}
	r.Registry = host
	if p, d, ok := strings.Cut(path, "@"); ok {
		if !grammar().digest.MatchString(d) {
			return r, fmt.Errorf("%q: the digest after @ must be sha256: and 64 lowercase hex digits, not %q", source, d)
		}
		r.Digest, path = d, p
	}
	if i := strings.LastIndexByte(path, ':'); i >= 0 {
		r.Tag, path = path[i+1:], path[:i]
		if !grammar().tag.MatchString(r.Tag) {
			return r, fmt.Errorf("%q: %q is not a tag (letters, digits, _ . -, at most 128, not starting with . or -)", source, r.Tag)
		}
	}
	if !grammar().repo.MatchString(path) || len(path) > 255 {
		return r, fmt.Errorf("%q: %q is not a repository name (lowercase letters, digits and separators . _ - between them, components joined by /)", source, path)
	}
	r.Repository = path
	if r.Tag == "" && r.Digest == "" {
		return r, fmt.Errorf("%q has no tag or digest: add :TAG (e.g. :1.0.0) or @sha256:DIGEST; agenthost does not guess latest", source)
	}
	return r, nil
}

// checkHost checks HOST[:PORT]: a DNS name, an IPv4 address or a
// bracketed IPv6 address, and a port of digits.
func checkHost(hostport string) error {
	h, port := splitPort(hostport)
	if strings.HasSuffix(hostport, ":") || strings.Trim(port, "0123456789") != "" || len(port) > 5 {
		return fmt.Errorf("%q is not a port", port)
	}
	if strings.HasPrefix(h, "[") {
		a, err := netip.ParseAddr(strings.Trim(h, "[]"))
		if err != nil || !a.Is6() || !strings.HasSuffix(h, "]") {
			return fmt.Errorf("%q is not an IPv6 address", h)
		}
		return nil
	}
	if !grammar().host.MatchString(h) || len(h) > 253 {
		return fmt.Errorf("%q is not a host name", h)
	}
	return nil
}

// splitPort splits HOST[:PORT], HOST being a name, an IPv4 address or a
// bracketed IPv6 address. An unbracketed IPv6 address is returned whole,
// as the host, which checkHost refuses.
func splitPort(hostport string) (host, port string) {
	if strings.HasPrefix(hostport, "[") {
		if i := strings.IndexByte(hostport, ']'); i >= 0 {
			host, rest := hostport[:i+1], hostport[i+1:]
			if p, ok := strings.CutPrefix(rest, ":"); ok {
				return host, p
			}
			if rest == "" {
				return host, ""
			}
		}
		return hostport, ""
	}
	if strings.Count(hostport, ":") != 1 {
		return hostport, ""
	}
	host, port, _ = strings.Cut(hostport, ":")
	return host, port
}

// String is the source as Parse reads it back.
func (r Ref) String() string {
	s := Scheme
	if r.Plain {
		s = PlainScheme
	}
	s += r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// Reference is what the registry is asked for: the digest when there is
// one, else the tag.
func (r Ref) Reference() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

// Loopback reports whether the registry is on this machine: localhost,
// an address of 127.0.0.0/8 or ::1. Nothing is resolved: a name other
// than localhost is not loopback, whatever it resolves to.
func (r Ref) Loopback() bool {
	h, _ := splitPort(r.Registry)
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// PlainHTTP reports whether the registry is talked to without TLS: when
// the source says oci+http://, or the registry is on this machine.
func (r Ref) PlainHTTP() bool { return r.Plain || r.Loopback() }

// ErrPlainRemote is the transport rule's refusal: plain HTTP to a
// registry off this machine without insecure = true.
var ErrPlainRemote = errors.New("plain HTTP to a registry off this machine")

// CheckTransport applies the transport rule before anything is contacted:
// TLS to every registry off this machine, unless the block says insecure
// = true (insecure). Plain HTTP on the network lets anyone on the path
// replace the plugin.
func (r Ref) CheckTransport(insecure bool) error {
	if r.Plain && !r.Loopback() && !insecure {
		return fmt.Errorf("%w: %s would fetch the plugin over the network unencrypted, so anyone on the path could replace the code agenthost runs; write oci:// to use TLS, or, for a registry you trust on a network you trust, add insecure = true to the plugin block", ErrPlainRemote, r)
	}
	return nil
}
