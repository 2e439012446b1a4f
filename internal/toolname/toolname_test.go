package toolname

import (
	"regexp"
	"strings"
	"testing"
)

func TestValidMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(Pattern)
	for _, name := range []string{
		"", "a", "read_file", "read-file", "Read_File_2", "a.b", "a b", "ä", "tool/x", "x\n",
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("ä", 20),
	} {
		if got, want := Valid(name), re.MatchString(name); got != want {
			t.Errorf("Valid(%q) = %v; the pattern says %v", name, got, want)
		}
	}
}

func TestFix(t *testing.T) {
	tests := []struct{ in, want string }{
		{"read_file", "read_file"},
		{"read file", "read_file"},
		{"lire.fichier", "lire_fichier"},
		{"été", "_t_"},
		{"", "tool"},
		{strings.Repeat("a", 70), strings.Repeat("a", 64)},
		{strings.Repeat("é", 70), strings.Repeat("_", 64)},
	}
	for _, tt := range tests {
		got := Fix(tt.in)
		if got != tt.want {
			t.Errorf("Fix(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !Valid(got) {
			t.Errorf("Fix(%q) = %q, which is not valid", tt.in, got)
		}
	}
}
