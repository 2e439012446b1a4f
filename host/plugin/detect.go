package plugin

import (
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// detectTimeout bounds the describe run that detects the kind of a plugin
// with no manifest section and no declared kind: an agenthost plugin prints
// its manifest in milliseconds, while a plain WASI command may wait for
// stdin or run on, and should not hold `validate` for the whole call
// timeout.
const detectTimeout = 3 * time.Second

// readsEnv reports whether the module can read its environment, and so
// AGENTHOST_MODE: a module without environ_get cannot be an agenthost
// plugin in describe mode, and is not run to find out.
func readsEnv(cm wazero.CompiledModule) bool {
	for _, f := range cm.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == wasi_snapshot_preview1.ModuleName && name == "environ_get" {
			return true
		}
	}
	return false
}

// detectLimits are the limits of the detecting describe run.
func detectLimits(l Limits) Limits {
	l.Timeout = min(l.Timeout, detectTimeout)
	return l
}

// errNoEnv is why a module without a manifest section that cannot read its
// environment is a plain WASI command.
var errNoEnv = errors.New("it has no " + ManifestSection + " section and cannot read AGENTHOST_MODE (it imports no environ_get), so it is not an agenthost plugin; nothing was run")

// detectError words the failure of the detecting describe run by its cause.
func detectError(err error, timeout time.Duration) error {
	var f *sandbox.Failure
	if errors.As(err, &f) && f.Kind == sandbox.FailureTimeout {
		return fmt.Errorf("cannot detect the plugin kind: it has no %s section, and its describe run (AGENTHOST_MODE=describe) did not finish within %s, the limit for detecting the kind. A plain WASI command that waits for input or keeps running needs kind = \"wasi_cli\" and tool blocks; an agenthost plugin must print its manifest and exit in describe mode (or carry the manifest in a custom section)", ManifestSection, timeout)
	}
	// The guest's stderr (a plain command's usage text or panic) is left
	// out: it answers a question nobody asked it.
	msg := err.Error()
	if i := strings.Index(msg, "; stderr:"); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("cannot detect the plugin kind: it has no %s section, and its describe run (AGENTHOST_MODE=describe) gave no manifest (%s), so it is not an agenthost plugin. A plain WASI command needs kind = \"wasi_cli\" and tool blocks", ManifestSection, firstLine(msg))
}
