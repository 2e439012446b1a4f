// Package argcount counts how often the host decodes a tool call's
// arguments and validates them against the tool's schema, so that tests
// can hold a call's path to one of each (loop decodes, host/plugin
// validates; package host's TestArgumentsOnce runs a real call and reads
// the counts). The counters are process-wide and only ever grow; a test
// reads the difference across the calls it makes, with no other calls
// running.
package argcount

import "sync/atomic"

var decodes, validations atomic.Int64

// Decoded records one decoding of a call's arguments.
func Decoded() { decodes.Add(1) }

// Validated records one validation of a call's arguments against a
// tool's schema.
func Validated() { validations.Add(1) }

// Counts returns the decodings and validations recorded so far.
func Counts() (decoded, validated int64) { return decodes.Load(), validations.Load() }
