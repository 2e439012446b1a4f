package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// exeResident is the resident size, in kB, of the read-only mappings of the
// running executable.
func exeResident(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && !strings.HasSuffix(f[0], ":") && strings.Contains(f[0], "-") {
			in = len(f) == 6 && f[5] == exe && (f[1] == "r-xp" || f[1] == "r--p")
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			n, _ := strconv.Atoi(f[1])
			total += n
		}
	}
	return total
}

// TestTrimExecutable: the executable's read-only pages drop out of the resident set,
// and the code and data they held still work (they fault back in).
func TestTrimExecutable(t *testing.T) {
	before := exeResident(t)
	trimExecutable()
	after := exeResident(t)
	t.Logf("executable resident: %d kB → %d kB", before, after)
	if after > before*3/4 {
		t.Fatalf("executable resident %d kB → %d kB; want a quarter of it or more given back", before, after)
	}
	if got := strconv.Itoa(12345) + strings.Repeat("x", 2); got != "12345xx" {
		t.Fatalf("code after the trim: %q", got)
	}
}
