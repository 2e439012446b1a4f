package term

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/termtext"
)

// EscapeDiagnostics is diags with their summaries and details escaped for
// a terminal: they quote what plugins and MCP servers said. The source
// snippet is the config's own text and is left as it is.
func EscapeDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	esc := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		c := *d
		c.Summary, c.Detail = termtext.Escape(d.Summary), termtext.Escape(d.Detail)
		esc[i] = &c
	}
	return esc
}

// EscapeLogEvent is the console log writer's FormatPrepare (stderr is a
// terminal). zerolog prints the message as is and field values that are not
// strings as JSON, which keeps C1 controls; top-level string fields it
// quotes with strconv.Quote already, so they are left alone.
func EscapeLogEvent(evt map[string]any) error {
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
