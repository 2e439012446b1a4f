package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// privTemp is this process's private temporary directory for running
// scenarios: made by os.MkdirTemp (mode 0700, a fresh name, so no other
// user can have planted anything in it), removed by RemovePrivateTemp. It
// holds buildwasm's builds (shared by the scenarios of the process) and,
// for Run, the agenthost link put on the scenarios' PATH.
var privTemp struct {
	mu  sync.Mutex
	dir string
}

// PrivateTemp returns the process's private temporary directory, making it
// on first use. Whoever makes it removes it with RemovePrivateTemp (Run
// does; a test binary does once its tests are over).
func PrivateTemp() (string, error) {
	privTemp.mu.Lock()
	defer privTemp.mu.Unlock()
	if privTemp.dir == "" {
		d, err := os.MkdirTemp("", "agenthost-test-")
		if err != nil {
			return "", fmt.Errorf("private temporary directory: %w", err)
		}
		privTemp.dir = d
	}
	for _, sub := range []string{"buildwasm", "bin"} {
		if err := os.MkdirAll(filepath.Join(privTemp.dir, sub), 0o700); err != nil {
			return "", err
		}
	}
	return privTemp.dir, nil
}

// RemovePrivateTemp removes the private temporary directory, if made.
func RemovePrivateTemp() {
	privTemp.mu.Lock()
	defer privTemp.mu.Unlock()
	if privTemp.dir != "" {
		os.RemoveAll(privTemp.dir)
		privTemp.dir = ""
	}
}
