package config

import (
	"testing"

	"github.com/agenthost/agenthost/internal/bytesize"
)

// ParseSize reads back what bytesize.Exact writes: the sizes in messages
// are ones a user can copy into agents.hcl.
func TestParseSizeReadsExact(t *testing.T) {
	for _, n := range []uint64{0, 100, 1 << 10, 1536 << 10, 1 << 20, 3 << 30, 2 << 40, 1<<20 + 1} {
		got := bytesize.Exact(n)
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, n)
		}
	}
}
