// Package bytesize writes byte counts for people, in the two forms
// agenthost uses: Exact, as agents.hcl writes a size (limits, caps), and
// About, a measured size rounded for a message ("12.3 KiB").
package bytesize

import "strconv"

// Exact is n as agents.hcl writes a size and host/config's ParseSize reads
// it back: the largest binary unit that divides n ("4MiB", "1536KiB",
// "100B").
func Exact(n uint64) string {
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatUint(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

// About is n bytes rounded for a person: "40 B", "12.3 KiB", "1.5 MiB".
func About(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
