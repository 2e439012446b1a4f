//go:build !unix

package host

import (
	"fmt"
	"os"
)

// checkPrivate only checks that a directory is one: ownership and mode
// bits do not describe who may write on Windows (access control lists do,
// and the user's cache directory is private by default).
func checkPrivate(path string, dir bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("compilation cache: %w", err)
	}
	if dir && !st.IsDir() {
		return fmt.Errorf("compilation cache %s is not a directory: set AGENTHOST_CACHE_DIR to a private directory", path)
	}
	return nil
}
