package main

import (
	"encoding/json"
	"io"

	"github.com/agenthost/agenthost/loop"
)

// The JSON output of run: --events (one line per event) and --json (one
// object at the end).

// writeEvent writes one --events line: the event's wire form (see
// loop/wire.go), the same JSON a session stores. It encodes into buf and
// returns it, for the next event.
func writeEvent(w io.Writer, buf []byte, ev loop.Event) []byte {
	b, err := ev.AppendJSON(buf[:0])
	if err != nil {
		return buf
	}
	b = append(b, '\n')
	w.Write(b)
	if cap(b) > 64<<10 {
		return nil // grown by a very long event: not kept
	}
	return b
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
