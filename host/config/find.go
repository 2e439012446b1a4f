package config

import (
	"os"
	"path/filepath"
)

// FileName is the config file agenthost looks for when none is named.
const FileName = "agents.hcl"

// Find is the config agenthost uses when none is named (no -c, no
// $AGENTHOST_CONFIG): agents.hcl in the current directory or, like git
// finds its repository, in the nearest parent directory that has one (its
// absolute path then). With none anywhere it is "agents.hcl", which
// loading then reports missing.
func Find() string {
	if _, err := os.Stat(FileName); err == nil {
		return FileName
	}
	dir, err := os.Getwd()
	if err != nil {
		return FileName
	}
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return FileName
		}
		dir = parent
		if st, err := os.Stat(filepath.Join(dir, FileName)); err == nil && !st.IsDir() {
			return filepath.Join(dir, FileName)
		}
	}
}
