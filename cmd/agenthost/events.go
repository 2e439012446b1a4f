package main

import (
	"encoding/json"
	"io"

	"github.com/agenthost/agenthost/loop"
)

// The JSON output of run: --events (one line per event) and --json (one
// object at the end).

// writeEvent writes one --events line: the event's wire form (see
// loop/wire.go), the same JSON a session stores.
func writeEvent(w io.Writer, ev loop.Event) {
	b, err := ev.MarshalJSON() // already compact: no second pass as json.Marshal would make
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}

// writeResult writes the --json object: the result, indented, with errors
// [] when there are none.
func writeResult(w io.Writer, res *loop.Result) {
	r := *res
	if r.Errors == nil {
		r.Errors = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}
