package main

import (
	"encoding/json"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
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
		diags = term.EscapeDiagnostics(diags)
	}
	config.WriteDiagnostics(e.stderr, files, diags, useColor(e))
}

// guardLines routes the command's stdout and stderr through a console
// (term.Console), once per process: run and chat call it before anything
// is printed. It returns the console.
func (e *env) guardLines() *term.Console {
	if e.con == nil {
		e.con = term.NewConsole(e.stdout, e.stderr, e.stdoutTTY)
		e.stdout, e.stderr = e.con.Out(), e.con.Err()
	}
	return e.con
}

// newOutput is what renders a run (run, chat, run --temporal) on e's
// console: as --json, as --events, or for a person.
func newOutput(e *env, asJSON, events bool) *term.Output {
	o := &term.Output{Con: e.guardLines(), JSON: asJSON, Events: events, Progress: showsProgress(e, asJSON, events), Live: e.stdoutTTY, ErrTTY: e.stderrTTY}
	o.Color = o.Progress && useColor(e)
	return o
}

// hasSchema is term.Output's Schema for cfg: whether an agent has an
// output_schema.
func hasSchema(cfg *config.Config) func(agent string) bool {
	return func(agent string) bool {
		a := cfg.Agent(agent)
		return a != nil && len(a.OutputSchema) > 0
	}
}

// showsProgress tells whether a run shows the progress display on stderr:
// on a terminal, unless stdout is --json or --events.
func showsProgress(e *env, asJSON, events bool) bool {
	return e.stderrTTY && !events && !asJSON
}

// keyArgs is what names each of h's tools' calls on a progress line: the
// key argument read from its input schema (term.NewKeyArgs).
func keyArgs(h *host.Host) term.KeyArgs {
	schemas := map[string]json.RawMessage{}
	for _, t := range h.Tools() {
		schemas[t.Name] = t.InputSchema
	}
	return term.NewKeyArgs(schemas)
}
