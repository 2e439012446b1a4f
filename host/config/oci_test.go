package config

import "testing"

// TestOCISource: a registry source is parsed and checked, never
// contacted: plain HTTP off loopback passes with insecure = true; the
// plugin keeps the parsed ref, no path.
func TestOCISource(t *testing.T) {
	for src, insecure := range map[string]string{
		"oci+http://registry.example.invalid/tools/x:1": "\n  insecure = true",
		"oci://registry.example.invalid/tools/x:1":      "",
		"oci+http://127.0.0.1:5000/tools/x:1":           "",
	} {
		cfg, diags := parseIn(t, base+`plugin "x" {
  source = "`+src+`"`+insecure+`
}
agent "a" {}
`, nil)
		if diags.HasErrors() {
			t.Errorf("%s: %s", src, dump(diags))
			continue
		}
		p := cfg.Plugins[0]
		if p.OCI == nil || p.OCI.String() != src || p.Path != "" || p.Insecure != (insecure != "") {
			t.Errorf("%s: plugin = %+v", src, p)
		}
	}
}
