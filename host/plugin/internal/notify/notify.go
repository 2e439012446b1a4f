// Package notify routes the progress and log notifications a plugin sends
// during a call: hyper-mcp v2's notify_progress and notify_logging_message
// host functions (package extism) and the notification lines an
// agenthost/1 plugin writes to stderr (package plugin) both end here, so
// both have the same bounds and the same destinations.
package notify

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/loop"
)

// Bounds of one call's notifications. Past MaxNotes they are dropped (and
// the drop logged once); the loop further keeps at most
// loop.MaxReportProgress and loop.MaxReportLogs of each as run events.
const (
	MaxNotes   = 1000    // notifications per call
	MaxMessage = 4 << 10 // bytes of a progress message
	MaxLogger  = 100     // bytes of a logger's name
)

// levels are MCP's log levels.
var levels = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true, "alert": true, "emergency": true}

// Level reports whether s is one of MCP's log levels (debug … emergency).
func Level(s string) bool { return levels[s] }

// Sink takes one call's notifications and sends each to the run's
// CallReport and the serving MCP client's CallClient, or, with neither
// (a describe run, a pre-started instance before its call), to the host's
// log. Its methods may be called from any goroutine.
type Sink struct {
	plugin string
	log    zerolog.Logger

	mu     sync.Mutex
	client loop.CallClient
	report loop.CallReport
	notes  int
}

// New makes the Sink of a call of plugin, logging to log until Set gives
// it somewhere else.
func New(plugin string, log zerolog.Logger) *Sink {
	return &Sink{plugin: plugin, log: log}
}

// Set sets where the notifications go from now on: the call's client (nil
// when no MCP client asked for it) and report (nil outside a run). A nil
// Sink ignores it.
func (s *Sink) Set(client loop.CallClient, report loop.CallReport) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client, s.report = client, report
}

// take counts a notification and returns the destinations; ok is false
// when the call has sent too many.
func (s *Sink) take(what string) (loop.CallClient, loop.CallReport, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes++
	if s.notes == MaxNotes+1 {
		s.log.Warn().Str("plugin", s.plugin).Int("max", MaxNotes).Msgf("%s: the call sent too many notifications; dropping the rest", what)
	}
	return s.client, s.report, s.notes <= MaxNotes
}

// Count counts a notification that goes elsewhere (a resource update);
// false when the call has sent too many.
func (s *Sink) Count(what string) bool {
	_, _, ok := s.take(what)
	return ok
}

// deliver sends a note with send to the call's report, then to its
// client; false when the call has neither.
func deliver(client loop.CallClient, report loop.CallReport, send func(loop.CallReport)) bool {
	if report != nil {
		send(report)
	}
	if client != nil {
		send(client)
	}
	return report != nil || client != nil
}

// Progress routes a progress notification (total and message nil when
// absent); what names the channel it came by, for the log.
func (s *Sink) Progress(what string, progress float64, total *float64, message *string) {
	client, report, ok := s.take(what)
	if !ok {
		return
	}
	t, msg := 0.0, ""
	if total != nil {
		t = *total
	}
	if message != nil {
		msg = Cut(*message, MaxMessage)
	}
	if deliver(client, report, func(to loop.CallReport) { to.Progress(progress, t, msg) }) {
		return
	}
	s.log.Debug().Str("plugin", s.plugin).Float64("progress", progress).Float64("total", t).Str("message", msg).Msg("plugin progress")
}

// Log routes a log message at level, which must be one of MCP's (Level);
// logger nil means the plugin's name; data is any JSON, cut to
// loop.MaxReportData bytes.
func (s *Sink) Log(what, level string, logger *string, data json.RawMessage) {
	client, report, ok := s.take(what)
	if !ok {
		return
	}
	data = loop.CutReportData(data)
	name := s.plugin
	if logger != nil {
		name = Cut(*logger, MaxLogger)
	}
	if deliver(client, report, func(to loop.CallReport) { to.Log(level, name, data) }) {
		return
	}
	var ev *zerolog.Event
	switch level {
	case "debug":
		ev = s.log.Debug()
	case "info", "notice":
		ev = s.log.Info()
	case "warning":
		ev = s.log.Warn()
	default:
		ev = s.log.Error()
	}
	ev.Str("plugin", s.plugin).Str("logger", name).RawJSON("data", data).Msg("plugin log")
}

// Cut cuts s to at most n bytes, as valid UTF-8.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Next returns a Sink for the next call of the same plugin (a reused
// instance serves many): it logs to the same log, has no destinations
// until Set and counts afresh.
func (s *Sink) Next() *Sink { return New(s.plugin, s.log) }

// Warn logs a warning about the plugin's notifications, with the text
// they concern.
func (s *Sink) Warn(msg, text string) {
	s.log.Warn().Str("plugin", s.plugin).Str("text", text).Msg(msg)
}
