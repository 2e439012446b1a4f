package config

import "testing"

// FormatSize writes what ParseSize reads back, with the largest binary
// unit that divides the size.
func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 100: "100B", 1 << 10: "1KiB", 1536 << 10: "1536KiB", 1 << 20: "1MiB",
		3 << 30: "3GiB", 2 << 40: "2TiB", 1<<20 + 1: "1048577B",
	} {
		got := FormatSize(n)
		if got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, n)
		}
	}
}
