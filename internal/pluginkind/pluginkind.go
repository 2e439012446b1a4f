// Package pluginkind is the table of plugin kinds: their names and the
// facts about each that agents.hcl validation (host/config) and the
// sandbox (host/plugin) both go by: which attributes of a plugin block a
// kind takes, and what implies it when a block declares no kind. Both
// packages take their list of kinds from Rows, so they cannot disagree on
// one; how each kind is loaded and run is its file in host/plugin (a kind
// implementation per row, in the same order).
package pluginkind

import "fmt"

// The kinds' names (the values of a plugin block's kind).
const (
	Agenthost = "agenthost"
	WASICLI   = "wasi_cli"
	Extism    = "extism"
	Component = "component"
)

// Mark is what implies a kind when a plugin block declares none.
type Mark int

const (
	// MarkBuiltin: a builtin source (builtin:NAME).
	MarkBuiltin Mark = iota + 1
	// MarkExtismAttrs: config, an http block, reuse, or a tool block
	// naming a function or an input.
	MarkExtismAttrs
	// MarkToolBlocks: tool blocks (without the attributes above).
	MarkToolBlocks
	// MarkHeader: the binary header says it is a WASI 0.2 component.
	MarkHeader
)

// Row is one kind.
type Row struct {
	Name string
	// Config, HTTP and Reuse report whether a plugin block of the kind
	// takes config, an http block and reuse = true.
	Config, HTTP, Reuse bool
	// ImpliedBy is what makes a block with no kind this kind (host/config
	// weighs the marks in the order of their values); 0 for none. A block
	// that has none of the marks is detected at load (host/plugin).
	ImpliedBy Mark
}

// Rows are the plugin kinds, in the order messages list them.
var Rows = []Row{
	{Name: Agenthost, ImpliedBy: MarkBuiltin},
	{Name: WASICLI, ImpliedBy: MarkToolBlocks},
	{Name: Extism, Config: true, HTTP: true, Reuse: true, ImpliedBy: MarkExtismAttrs},
	{Name: Component, Config: true, HTTP: true, ImpliedBy: MarkHeader},
}

// Names are the kinds' names, in the order of Rows.
func Names() []string {
	out := make([]string, len(Rows))
	for i, r := range Rows {
		out[i] = r.Name
	}
	return out
}

// Lookup returns the row of the kind name; false (and a zero Row, which
// takes none of the kind-specific attributes) for "" or an unknown name.
func Lookup(name string) (Row, bool) {
	for _, r := range Rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}

// Implied is the name of the kind the mark m implies; "" for none.
func Implied(m Mark) string {
	for _, r := range Rows {
		if r.ImpliedBy == m {
			return r.Name
		}
	}
	return ""
}

// List is the names for a message: "a", "b", "c" or "d".
func List() string {
	var b []byte
	for i, r := range Rows {
		switch {
		case i == len(Rows)-1 && i > 0:
			b = append(b, " or "...)
		case i > 0:
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%q", r.Name)
	}
	return string(b)
}
