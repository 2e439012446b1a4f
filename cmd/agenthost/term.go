package main

import (
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/termtext"
)

// Text the host did not write itself (model text, tool output, plugin
// manifests, provider messages) is escaped before it reaches a terminal:
// control sequences in it would be obeyed (a title change, a cleared
// screen, a line overwritten by \r). Output that is not a terminal stays
// exact, and --json / --events are JSON-escaped anyway.

// useColor tells whether diagnostics and logs on stderr use colours: on a
// terminal, unless $NO_COLOR is set.
func useColor(e *env) bool {
	return e.stderrTTY && e.getenv("NO_COLOR") == ""
}

// outText is s for stdout: escaped when stdout is a terminal.
func outText(e *env, s string) string {
	if e.stdoutTTY {
		return termtext.Escape(s)
	}
	return s
}

// errText is s for stderr: escaped when stderr is a terminal.
func errText(e *env, s string) string {
	if e.stderrTTY {
		return termtext.Escape(s)
	}
	return s
}

// escapeLogEvent is the console log writer's FormatPrepare (stderr is a
// terminal). zerolog prints the message as is and field values that are not
// strings as JSON, which keeps C1 controls; top-level string fields it
// quotes with strconv.Quote already, so they are left alone.
func escapeLogEvent(evt map[string]any) error {
	for k, v := range evt {
		switch v := v.(type) {
		case string:
			if k == zerolog.MessageFieldName {
				evt[k] = termtext.Escape(v)
			}
		case map[string]any, []any:
			evt[k] = escapeLogValue(v)
		}
	}
	return nil
}

func escapeLogValue(v any) any {
	switch v := v.(type) {
	case string:
		return termtext.Escape(v)
	case []any:
		for i := range v {
			v[i] = escapeLogValue(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = escapeLogValue(v[k])
		}
	}
	return v
}
