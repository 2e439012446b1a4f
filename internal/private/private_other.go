//go:build !unix

package private

import "io/fs"

// Check returns nil: where there are no Unix owners and modes (Windows),
// access control lists decide who may write, and a user's own
// directories are private by default.
func Check(fs.FileInfo) *Problem { return nil }
