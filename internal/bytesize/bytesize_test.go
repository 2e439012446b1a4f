package bytesize

import "testing"

func TestExact(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 100: "100B", 1 << 10: "1KiB", 1536 << 10: "1536KiB", 1 << 20: "1MiB",
		3 << 30: "3GiB", 2 << 40: "2TiB", 1<<20 + 1: "1048577B",
	} {
		if got := Exact(n); got != want {
			t.Errorf("Exact(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAbout(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 12595: "12.3 KiB", 1536 << 10: "1.5 MiB", 3 << 30: "3072.0 MiB",
	} {
		if got := About(n); got != want {
			t.Errorf("About(%d) = %q, want %q", n, got, want)
		}
	}
}
