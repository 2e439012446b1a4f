package sandbox

import (
	"fmt"
	"strings"
)

// FailureKind classifies a call that did not run to its end. The kinds'
// names are part of the documented output (docs/plugin-protocol.md,
// docs/security.md): a model and a user see them.
type FailureKind string

const (
	// FailureTrap: the guest trapped (unreachable, out-of-bounds access,
	// stack overflow, a bogus resource handle, a call to an import
	// agenthost does not provide, ...).
	FailureTrap FailureKind = "trap"
	// FailureTimeout: the call ran past limits.timeout (its context's
	// deadline) and was stopped.
	FailureTimeout FailureKind = "timeout"
	// FailureExit: the guest exited: for a module, with a code other than
	// 0 or 1 (a Go panic exits with 2); for a component, through
	// wasi:cli/exit.
	FailureExit FailureKind = "exit"
	// FailureMemory: the guest failed with its memory at limits.memory,
	// or the call would have made the host hold more than limits.memory
	// for it (internal/hostmem).
	FailureMemory FailureKind = "memory"
	// FailureOutput: the guest wrote more than twice limits.max_output to
	// stdout or stderr and was stopped.
	FailureOutput FailureKind = "output"
	// FailureCanceled: the call's context was cancelled (the run was
	// aborted); errors.Is(err, context.Canceled) holds.
	FailureCanceled FailureKind = "canceled"
	// FailureStart: the module or component could not be instantiated.
	FailureStart FailureKind = "start"
	// FailureQuota: the guest wrote more than limits.max_write or created
	// more than limits.max_files entries in its mounts during the call;
	// what went past the quota failed with EIO.
	FailureQuota FailureKind = "quota"
	// FailureResult: a component's result is larger than its sandbox's
	// MaxResult (host/plugin reports it as FailureOutput).
	FailureResult FailureKind = "result"
)

// Failure is a plugin that broke during a call, as opposed to a tool that
// reported an error result. The loop shows it to the model as an error
// result and goes on. host/component returns it without Plugin and Tool;
// host/plugin names them and words Err in the plugin block's terms.
type Failure struct {
	Plugin string
	Tool   string
	Kind   FailureKind
	// ExitCode is the guest's exit code for FailureExit and FailureMemory.
	ExitCode uint32
	// Stderr is what the guest wrote to stderr: its end (at most 2 KiB)
	// in host/plugin's failures.
	Stderr string
	Err    error
}

func (f *Failure) Error() string {
	var b strings.Builder
	if f.Plugin != "" || f.Tool != "" {
		fmt.Fprintf(&b, "plugin %q tool %q: ", f.Plugin, f.Tool)
	}
	b.WriteString(string(f.Kind))
	if f.Err != nil {
		fmt.Fprintf(&b, ": %v", f.Err)
	}
	if f.Stderr != "" {
		fmt.Fprintf(&b, "; stderr: %s", f.Stderr)
	}
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }
