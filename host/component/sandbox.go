package component

import (
	"net/http"
	"net/url"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/rootfs"
)

// Sandbox is what one call may reach. The zero Sandbox grants nothing: no
// files, no environment, no arguments, a fake clock, a deterministic
// random stream, no network, no config values.
type Sandbox struct {
	// Mounts are the directories the guest sees as wasi:filesystem
	// preopens, in order.
	Mounts []Mount
	// Env is the environment (wasi:cli/environment), as NAME=value.
	Env []string
	// Args are the arguments (wasi:cli/environment get-arguments).
	Args []string
	// Stdin is what the guest reads from stdin.
	Stdin []byte
	// Command marks the call of a command's wasi:cli/run (RunFunc): a
	// wasi:cli/exit ends it with an Outcome and its exit code, as a
	// process's exit does, not with a failure.
	Command bool
	// RealClock grants the host's wall and monotonic clocks; without it
	// the clock is the other plugin kinds' (sandbox.FakeClock): the wall
	// clock starts at 2022-01-01T00:00:00Z, the monotonic clock at 0,
	// each advancing by 1 ms per reading, and timers fire at once.
	RealClock bool
	// RealRandom grants the host's cryptographic randomness; without it
	// wasi:random returns the same ChaCha8 stream on every call.
	RealRandom bool
	// MaxOutput is how much of stdout and of stderr each is kept, in
	// bytes; a guest that writes more than twice as much to either is
	// stopped (sandbox.FailureOutput). 0 means DefaultMaxOutput.
	MaxOutput int
	// MaxResult bounds the JSON of a result, in bytes; a larger result
	// fails the call (sandbox.FailureResult). 0 means DefaultMaxResult.
	MaxResult int
	// Quota is charged by the mounts' file systems (made with
	// rootfs.FS.WithQuota); when it refuses something the call fails
	// with sandbox.FailureQuota. nil: no quota.
	Quota *rootfs.Quota
	// HTTP grants wasi:http/outgoing-handler; nil: every request fails
	// with HTTP-request-denied.
	HTTP *HTTPGrant
	// Config holds the values of wasi:config/store.
	Config map[string]string
}

// Mount is a directory given to the guest.
type Mount struct {
	// GuestPath is the preopen's name, like "/data".
	GuestPath string
	// FS is the host directory, confined by rootfs. A read-only FS
	// refuses writes; ReadOnly also marks the descriptor read-only.
	FS       *rootfs.FS
	ReadOnly bool
}

// HTTPGrant is the grant of outgoing HTTP.
type HTTPGrant struct {
	// Allow reports whether a request may go to u; every request,
	// including each hop of a redirect the guest follows, is checked.
	// The host never follows redirects itself: the guest receives the
	// 3xx response.
	Allow func(u *url.URL) bool
	// Transport sends the requests; nil means a transport without
	// proxies from the environment.
	Transport http.RoundTripper
	// MaxBody bounds each response body and each request body, in
	// bytes; 0 means DefaultMaxHTTPBody.
	MaxBody int64
}

// Defaults of the Sandbox's limits: the plugin block's (internal/defaults).
const (
	DefaultMaxOutput   = defaults.MaxOutput
	DefaultMaxResult   = 4 << 20
	DefaultMaxHTTPBody = defaults.HTTPBody
)

func (s *Sandbox) maxOutput() int {
	if s.MaxOutput > 0 {
		return s.MaxOutput
	}
	return DefaultMaxOutput
}

func (s *Sandbox) maxResult() int {
	if s.MaxResult > 0 {
		return s.MaxResult
	}
	return DefaultMaxResult
}
