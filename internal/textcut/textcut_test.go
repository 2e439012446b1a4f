package textcut

import "testing"

func TestPrefixAndClip(t *testing.T) {
	for _, c := range []struct {
		s      string
		n      int
		prefix string
		clip   string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "hel…"},
		{"héllo", 2, "h", "h…"}, // é is two bytes: not split
		{"héllo", 3, "hé", "hé…"},
		{"€", 2, "", "…"},
		{"", 0, "", ""},
	} {
		if got := Prefix(c.s, c.n); got != c.prefix {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.prefix)
		}
		if got := Clip(c.s, c.n); got != c.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.clip)
		}
	}
}

func TestRunesAndLine(t *testing.T) {
	for _, c := range []struct {
		s     string
		n     int
		runes string
		line  string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "he…", "he…"},
		{"héllo", 3, "hé…", "hé…"}, // runes, not bytes
		{"€€€", 1, "…", "…"},
		{"ab", 0, "", ""},
		{" a \n  b\t", 10, " a \n  b\t", "a b"},
		{"a\nbcdef", 4, "a\nb…", "a b…"},
	} {
		if got := Runes(c.s, c.n); got != c.runes {
			t.Errorf("Runes(%q, %d) = %q, want %q", c.s, c.n, got, c.runes)
		}
		if got := Line(c.s, c.n); got != c.line {
			t.Errorf("Line(%q, %d) = %q, want %q", c.s, c.n, got, c.line)
		}
	}
}
