//go:build !notemporal

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestRunsTerminator: "--" ends the flags, so that a positional argument
// that looks like one (a call id "--always", "-always") stays positional,
// wherever the "--" is after the command's words; "--" as a flag's value
// is that value. "--" before the command's words leaves no command: a
// usage error, never an approval.
func TestRunsTerminator(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		pos    []string
		always bool
		reason string
	}{
		{[]string{"runs", "approve", "--", "r1", "--always"}, []string{"r1", "--always"}, false, ""},
		{[]string{"runs", "approve", "--", "r1", "-always"}, []string{"r1", "-always"}, false, ""},
		{[]string{"runs", "approve", "--always", "--", "r1", "-x"}, []string{"r1", "-x"}, true, ""},
		{[]string{"runs", "approve", "r1", "--always"}, []string{"r1"}, true, ""},
		{[]string{"runs", "approve", "r1", "-always"}, []string{"r1"}, true, ""},
		{[]string{"runs", "--temporal", "h:1", "approve", "--", "r1", "--always"}, []string{"r1", "--always"}, false, ""},
		{[]string{"runs", "deny", "--reason", "--", "r1", "c1"}, []string{"r1", "c1"}, false, "--"},
		{[]string{"runs", "deny", "--reason=x", "--", "--always"}, []string{"--always"}, false, "x"},
	} {
		pos, flags, code := parsed(t, tc.args, "always", "reason")
		if code != exitOK || !slices.Equal(pos, tc.pos) || flags["always"] != fmt.Sprint(tc.always) && tc.args[1] == "approve" || flags["reason"] != tc.reason && tc.args[1] == "deny" {
			t.Errorf("%q: exit %d, positional %q, flags %v; want %q, always %v, reason %q", tc.args, code, pos, flags, tc.pos, tc.always, tc.reason)
		}
	}
	var stderr bytes.Buffer
	e := &env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }}
	if code := run(context.Background(), []string{"runs", "--", "approve", "r1", "--always"}, e); code != exitUsage || !strings.Contains(stderr.String(), `unknown command "approve" for "agenthost runs"`) {
		t.Errorf("runs -- approve r1 --always: exit %d, %q; want 2 and unknown command", code, stderr.String())
	}
}
