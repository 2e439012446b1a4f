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

// TestTrimStartPages: the executable's read-only pages drop out of the
// resident set, and the code they held still runs (it faults back in).
func TestTrimStartPages(t *testing.T) {
	before := exeResident(t)
	trimStartPages()
	after := exeResident(t)
	t.Logf("executable resident: %d kB → %d kB", before, after)
	if after >= before/2 {
		t.Fatalf("executable resident %d kB → %d kB; want it at least halved", before, after)
	}
	// Code and data of the binary still work: run a command end to end.
	var out strings.Builder
	e := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }}
	if code := run(t.Context(), []string{"version"}, e); code != 0 || out.Len() == 0 {
		t.Fatalf("version after the trim: exit %d, output %q", code, out.String())
	}
}
