package defaults

import (
	"go/build"
	"strings"
	"testing"
)

// TestLeaf keeps defaults a leaf: config and loop both import it, so it
// imports nothing but the standard library.
func TestLeaf(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("import .: %v", err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
			t.Errorf("defaults imports %q; it must stay a leaf (standard library only)", imp)
		}
	}
}
