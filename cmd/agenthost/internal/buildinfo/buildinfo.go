// Package buildinfo is what agenthost knows of its own build, from what
// the go command recorded in the executable (runtime/debug.ReadBuildInfo):
// the module version, the commit and its date, the Go version. It is what
// `agenthost version` prints, and the version the host reports (to MCP
// clients, in traces).
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version is the module version agenthost was built as (go install
// ...@vX.Y.Z), or "devel".
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Write prints the lines of `agenthost version`: the version, then the
// commit and its date (and whether the tree had uncommitted changes) when
// the build recorded them, and the Go version and platform.
func Write(w io.Writer) {
	fmt.Fprintf(w, "agenthost %s\n", Version())
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", with uncommitted changes"
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(w, "commit %s (%s%s)\n", rev, at, modified)
	}
	fmt.Fprintf(w, "built with %s for %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
}
