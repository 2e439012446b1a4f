package main

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/config"
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

// writeDiagnostics prints diags on stderr, every diagnostic of the command
// line. Their summaries and details quote what plugins and MCP servers
// said (tool names, manifests, error messages, a listing of a server's
// tools): on a terminal they are escaped here, where every diagnostic
// passes, rather than where each is made, so that none is missed and the
// host's messages stay exact for a pipe. The source snippet is the
// config's own text and is printed as it is.
func writeDiagnostics(e *env, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if e.stderrTTY {
		esc := make(hcl.Diagnostics, len(diags))
		for i, d := range diags {
			c := *d
			c.Summary, c.Detail = termtext.Escape(d.Summary), termtext.Escape(d.Detail)
			esc[i] = &c
		}
		diags = esc
	}
	config.WriteDiagnostics(e.stderr, files, diags, useColor(e))
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
