package ociref

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		src                   string
		reg, repo, tag, dgst  string
		plain, loop, plainTLS bool
	}{
		{src: "oci://ghcr.io/tuananh/fetch-plugin:latest", reg: "ghcr.io", repo: "tuananh/fetch-plugin", tag: "latest"},
		{src: "oci://127.0.0.1:5000/a/b@" + d, reg: "127.0.0.1:5000", repo: "a/b", dgst: d, loop: true, plainTLS: true},
		{src: "oci://localhost:5000/x:1.0@" + d, reg: "localhost:5000", repo: "x", tag: "1.0", dgst: d, loop: true, plainTLS: true},
		{src: "oci://[::1]:5000/x:1", reg: "[::1]:5000", repo: "x", tag: "1", loop: true, plainTLS: true},
		{src: "oci+http://registry.lan:5000/x:1", reg: "registry.lan:5000", repo: "x", tag: "1", plain: true, plainTLS: true},
		{src: "oci://127.1.2.3/x:1", reg: "127.1.2.3", repo: "x", tag: "1", loop: true, plainTLS: true},
	} {
		r, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if r.Registry != tc.reg || r.Repository != tc.repo || r.Tag != tc.tag || r.Digest != tc.dgst || r.Plain != tc.plain {
			t.Errorf("Parse(%q) = %+v", tc.src, r)
		}
		if r.Loopback() != tc.loop || r.PlainHTTP() != tc.plainTLS {
			t.Errorf("%q: Loopback %v PlainHTTP %v", tc.src, r.Loopback(), r.PlainHTTP())
		}
		if r.String() != tc.src {
			t.Errorf("String() = %q, want %q", r.String(), tc.src)
		}
	}
}

func TestParseRefused(t *testing.T) {
	for src, want := range map[string]string{
		"oci://ghcr.io/x":                                 "no tag or digest",
		"oci://ghcr.io":                                   "names no repository",
		"oci://ghcr.io/X:1":                               "not a repository name",
		"oci://ghcr.io/x@sha256:abc":                      "64 lowercase hex",
		"oci://ghcr.io/x:-1":                              "not a tag",
		"oci://gh cr.io/x:1":                              "not a host name",
		"oci://ghcr.io:/x:1":                              "not a port",
		"oci://ghcr.io:12a/x:1":                           "not a port",
		"oci://::1/x:1":                                   "not a host name",
		"oci://[::1/x:1":                                  "not an IPv6",
		"https://ghcr.io/x:1":                             "not a registry source",
		"oci://user@ghcr.io/x:1":                          "not a host name",
		"oci://ghcr.io/x:1@md5:" + "ab":                   "64 lowercase hex",
		"oci://ghcr.io/x/../y:1":                          "not a repository name",
		"oci://ghcr.io/" + "x:" + "a/b":                   "not a tag",
		"oci://example.com/x:1?insecure=1":                "not a tag",
		"oci://example.com/x:" + strings.Repeat("a", 129): "not a tag",
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", src, err, want)
		}
	}
}

func TestCheckTransport(t *testing.T) {
	for src, ok := range map[string]bool{
		"oci://registry.example.invalid/x:1":      true, // TLS
		"oci+http://registry.example.invalid/x:1": false,
		"oci+http://127.0.0.1:5000/x:1":           true,
		"oci+http://localhost/x:1":                true,
		"oci+http://[::1]:1/x:1":                  true,
		"oci+http://127.0.0.1.nip.io/x:1":         false, // a name is not resolved
	} {
		r, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		err = r.CheckTransport(false)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrPlainRemote) {
			t.Errorf("CheckTransport(%q, false) = %v", src, err)
		}
		if err := r.CheckTransport(true); err != nil {
			t.Errorf("CheckTransport(%q, true) = %v", src, err)
		}
	}
}
