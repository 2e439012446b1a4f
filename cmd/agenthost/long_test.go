package main

import (
	"os"
	"testing"
)

// longSuite skips t unless AGENTHOST_LONG_TESTS=1: the suites that take a
// minute or more of both cores (the MCP conformance suites, thousands of
// plugin calls) stay out of a plain `go test ./...`, and .ci/run runs them
// in a step of their own.
func longSuite(t *testing.T) {
	t.Helper()
	if os.Getenv("AGENTHOST_LONG_TESTS") != "1" {
		t.Skip("a long suite: set AGENTHOST_LONG_TESTS=1 to run it (.ci/run does)")
	}
}
