package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/agenthost/agenthost/internal/sandbox"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/plugin/internal/notify"
	"github.com/agenthost/agenthost/loop"
)

// An agenthost/1 plugin reports progress and log messages by writing
// notification lines to stderr, each a JSON object naming its kind under
// the key "agenthost":
//
//	{"agenthost":"progress","progress":3,"total":10,"message":"..."}
//	{"agenthost":"log","level":"info","logger":"...","data":...}
//
// The host reads them as they are written and routes them like hyper-mcp
// v2's notify_progress and notify_logging_message (package notify): to the
// run's tool.progress and tool.log events and the serving MCP client.
// Every other stderr line stays a diagnostic, as is a line that names a
// kind but is not a valid notification, and a line longer than
// maxNoteLine, which is not parsed at all.

// maxNoteLine bounds a notification line (its newline not counted): a
// longer line is plain stderr. It leaves room for a log message's data
// (loop.MaxReportData) with JSON escaping.
const maxNoteLine = 16 << 10

// noteLines splits an agenthost/1 plugin's stderr into lines and takes
// the notification lines out (a sandbox.LineFilter of stderr). Only a line that starts
// with '{' is held until its newline, and at most maxNoteLine bytes of it;
// other lines pass through to the output as they are written.
type noteLines struct {
	sink *notify.Sink
	line []byte // the start of the current line, held while it may be a notification
	pass bool   // the current line is output to its end
	// warned is set when a malformed notification line was logged.
	warned bool
}

// Split writes b, a part of stderr, taking out its notification lines.
func (l *noteLines) Split(w *sandbox.Output, b []byte) {
	for len(b) > 0 {
		part := b
		nl := bytes.IndexByte(b, '\n')
		if nl >= 0 {
			part = b[:nl+1]
		}
		b = b[len(part):]
		end := nl >= 0
		switch {
		case l.pass:
			w.Keep(part)
			l.pass = !end
		case len(l.line) == 0 && part[0] != '{':
			w.Keep(part)
			l.pass = !end
		case len(l.line)+len(part) > maxNoteLine+1 || (!end && len(l.line)+len(part) > maxNoteLine):
			// Too long to be a notification: plain stderr.
			w.Keep(l.line)
			w.Keep(part)
			l.line = l.line[:0]
			l.pass = !end
		case !end:
			l.line = append(l.line, part...)
		default:
			line := part
			if len(l.line) > 0 {
				l.line = append(l.line, part...)
				line = l.line
			}
			if !l.note(line) {
				w.Keep(line)
			}
			l.line = l.line[:0]
		}
	}
}

// Flush keeps the held start of a line the guest did not end: without its
// newline it is not a notification.
func (l *noteLines) Flush(w *sandbox.Output) {
	if len(l.line) == 0 {
		return
	}
	w.Keep(l.line)
	l.line = l.line[:0]
}

// agenthostKey is the reserved key of a notification line.
var agenthostKey = []byte(`"agenthost"`)

// note routes line if it is a notification line and reports whether it
// was.
func (l *noteLines) note(line []byte) bool {
	if !bytes.Contains(line, agenthostKey) {
		return false
	}
	var n struct {
		Kind     *string         `json:"agenthost"`
		Progress *float64        `json:"progress"`
		Total    *float64        `json:"total"`
		Message  *string         `json:"message"`
		Level    string          `json:"level"`
		Logger   *string         `json:"logger"`
		Data     json.RawMessage `json:"data"`
	}
	if json.Unmarshal(line, &n) != nil || n.Kind == nil {
		return false
	}
	switch {
	case *n.Kind == "progress" && n.Progress != nil:
		l.sink.Progress("stderr progress line", *n.Progress, n.Total, n.Message)
	case *n.Kind == "log" && notify.Level(n.Level) && n.Data != nil:
		l.sink.Log("stderr log line", n.Level, n.Logger, n.Data)
	default:
		if !l.warned {
			l.warned = true
			l.sink.Warn("stderr line names an \"agenthost\" notification but is not one (want {\"agenthost\":\"progress\",\"progress\":N,...} or {\"agenthost\":\"log\",\"level\":MCP level,\"data\":...}); kept as stderr", notify.Cut(sandbox.ValidUTF8(line), 200))
		}
		return false
	}
	return true
}

// takeNotes makes the instance, one of an agenthost/1 plugin, route the
// notification lines of its stderr: to ctx's report and client, or to
// log outside a call.
func (i *instance) takeNotes(ctx context.Context, plugin string, log zerolog.Logger) *instance {
	i.notes = notify.New(plugin, log)
	i.notes.Set(loop.CallClientFrom(ctx), loop.CallReportFrom(ctx))
	i.stderr.Lines = &noteLines{sink: i.notes}
	return i
}

// nextNotes gives a reused instance's new stderr (serveLine) a Sink for
// the call of ctx; i.mu is held.
func (i *instance) nextNotes(ctx context.Context) {
	if i.notes == nil {
		return
	}
	i.notes = i.notes.Next()
	i.notes.Set(loop.CallClientFrom(ctx), loop.CallReportFrom(ctx))
	i.stderr.Lines = &noteLines{sink: i.notes}
}
