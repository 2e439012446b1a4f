package plugin

import (
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/pluginkind"
)

// TestKindsTable: the kinds table has one kind per row of
// internal/pluginkind, in its order, exactly one of them told by the
// binary header, and its kinds claim disjoint core modules: for each
// combination of what detection looks at, exactly one core kind.
func TestKindsTable(t *testing.T) {
	var names []string
	components := 0
	for _, k := range kinds {
		names = append(names, string(k.name()))
		if k.component() {
			components++
		}
	}
	if want := pluginkind.Names(); !slices.Equal(names, want) {
		t.Errorf("kinds table %q, internal/pluginkind %q", names, want)
	}
	if components != 1 {
		t.Errorf("%d kinds are told by the header, want 1", components)
	}
	for _, extism := range []bool{false, true} {
		for _, section := range []string{"", "{}"} {
			for _, tools := range [][]CLITool{nil, {{Name: "t"}}} {
				f := &loadcache.Facts{Extism: extism, Section: section}
				var claim []Kind
				for _, k := range kinds {
					if k.detect(f, &Spec{Tools: tools}) {
						claim = append(claim, k.name())
					}
				}
				if len(claim) != 1 {
					t.Errorf("extism %v, section %q, %d tool blocks: claimed by %q, want one kind", extism, section, len(tools), claim)
				}
			}
		}
	}
}
