package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestChatCommands checks the chat commands that need no host: /new forgets
// the session, /session prints it, /exit and /quit leave, and an unknown
// command lists the commands (escaped: it is what the user typed).
func TestChatCommands(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	c := &chat{e: e, session: "20260101-000000-abcdef"}

	if !c.command("/session") || out.String() != "20260101-000000-abcdef\n" {
		t.Errorf("/session printed %q", out.String())
	}
	if !c.command("/new") || c.session != "" {
		t.Errorf("/new left the session %q", c.session)
	}
	if !strings.Contains(errb.String(), "left session 20260101-000000-abcdef") {
		t.Errorf("/new said %q", errb.String())
	}
	errb.Reset()
	if !c.command("/session") || !strings.Contains(errb.String(), "no session yet") {
		t.Errorf("/session without a session said %q", errb.String())
	}
	errb.Reset()
	if !c.command("/frob \x1b[2J") {
		t.Error("an unknown command ended the chat")
	}
	if got := errb.String(); !strings.Contains(got, `unknown command /frob \x1b[2J`) || !strings.Contains(got, "/usage") {
		t.Errorf("unknown command said %q", got)
	}
	for _, cmd := range []string{"/exit", "/quit", "/exit now"} {
		if c.command(cmd) {
			t.Errorf("%s did not end the chat", cmd)
		}
	}
	out.Reset()
	c.usage()
	if out.String() != "tokens -, cost - (no session yet)\n" {
		t.Errorf("/usage without a session printed %q", out.String())
	}
}
