// Package httplimits is the limit flags of `agenthost mcp serve --http`
// (--max-conns, --max-sessions, --session-timeout, --read-timeout,
// --resume-buffer, --resume-buffer-total): declared with httpserve's
// defaults (Declare), then checked before anything is served (Check),
// each refusal naming the flag to change. Sizes are written as agents.hcl
// writes them ("8MiB"). httpserve applies the limits; it parses no flags.
package httplimits

import (
	"fmt"
	"math"
	"slices"

	"github.com/spf13/pflag"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpserve/httpserve"
	"github.com/agenthost/agenthost/internal/bytesize"
)

// names are the flags Declare declares: only --http takes them.
var names = []string{"max-conns", "max-sessions", "session-timeout", "read-timeout", "resume-buffer", "resume-buffer-total"}

// Declare declares the limit flags on fs; the limits they set start as
// httpserve.DefaultLimits.
func Declare(fs *pflag.FlagSet) *httpserve.Limits {
	l := httpserve.DefaultLimits()
	fs.IntVar(&l.MaxConns, "max-conns", l.MaxConns, "with --http, the most connections open at once (`N`); one more is answered 503")
	fs.IntVar(&l.MaxSessions, "max-sessions", l.MaxSessions, "with --http, the most MCP sessions open at once (`N`); a new one past it is answered 503")
	fs.DurationVar(&l.SessionTimeout, "session-timeout", l.SessionTimeout, "with --http, close an MCP session that has had no request for this `duration` (0: never)")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", l.ReadTimeout, "with --http, a request's headers, then its body, must arrive within this `duration`")
	fs.Var((*size)(&l.ResumeBuffer), "resume-buffer", "with --http, how many bytes of events (a `size`, like 8MiB) one session keeps for a client that resumes a dropped event stream (Last-Event-ID); the oldest go first (0: keep none, streams cannot be resumed)")
	fs.Var((*size)(&l.ResumeBufferTotal), "resume-buffer-total", "with --http, how many bytes of events (a `size`) all sessions keep together; past it, the oldest of the session that keeps the most go first")
	return &l
}

// Check returns the usage error of the limits l that fs's flags set: a
// limit flag given without --http (withHTTP false), or a value out of
// range; nil when all is well.
func Check(fs *pflag.FlagSet, withHTTP bool, l httpserve.Limits) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if !withHTTP && err == nil && slices.Contains(names, f.Name) {
			err = fmt.Errorf("--%s is for --http; stdio serves one client", f.Name)
		}
	})
	switch {
	case err != nil:
		return err
	case l.MaxConns < 1:
		return fmt.Errorf("--max-conns %d: must be at least 1 (a client uses two or more: its event stream and its requests)", l.MaxConns)
	case l.MaxSessions < 1:
		return fmt.Errorf("--max-sessions %d: must be at least 1", l.MaxSessions)
	case l.SessionTimeout < 0:
		return fmt.Errorf("--session-timeout %s: must not be negative (0 keeps idle sessions open)", l.SessionTimeout)
	case l.ReadTimeout <= 0:
		return fmt.Errorf("--read-timeout %s: must be positive", l.ReadTimeout)
	case l.ResumeBuffer > 0 && l.ResumeBuffer < httpserve.MinResumeBuffer:
		return fmt.Errorf("--resume-buffer %s: must be 0 (no resumable streams) or at least %s", size(l.ResumeBuffer), size(httpserve.MinResumeBuffer))
	case l.ResumeBuffer > 0 && l.ResumeBufferTotal < l.ResumeBuffer:
		return fmt.Errorf("--resume-buffer-total %s: must be at least --resume-buffer (%s)", size(l.ResumeBufferTotal), size(l.ResumeBuffer))
	}
	return nil
}

// size is a flag holding a byte size, written as the configuration
// writes sizes ("8MiB", "512KiB", "1048576").
type size int64

func (s *size) Set(v string) error {
	n, err := config.ParseSize(v)
	if err != nil {
		return err
	}
	if n > math.MaxInt64 {
		return fmt.Errorf("size %q is too large", v)
	}
	*s = size(n)
	return nil
}

func (s *size) Type() string { return "size" }

func (s size) String() string { return bytesize.Exact(uint64(s)) }
