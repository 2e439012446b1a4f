package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// parsed runs the command line args through the real command tree, with
// the command it names replaced by one that records what cobra parsed:
// the positional arguments and the values of the flags named.
func parsed(t *testing.T, args []string, flags ...string) ([]string, map[string]string, int) {
	t.Helper()
	e := &env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }}
	c := &cli{ctx: context.Background(), e: e}
	root := c.tree()
	args = goStyleArgs(root, args)
	cmd, _, err := root.Find(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	var pos []string
	values := map[string]string{}
	cmd.RunE = func(cmd *cobra.Command, p []string) error {
		pos = p
		for _, name := range flags {
			if f := cmd.Flags().Lookup(name); f != nil {
				values[name] = f.Value.String()
			}
		}
		return nil
	}
	root.SetArgs(args)
	if _, err := root.ExecuteC(); err != nil {
		return nil, nil, exitUsage
	}
	return pos, values, exitOK
}

// TestGoStyleArgs: goStyleArgs, the one rewriting of the command line
// before cobra parses it, turns the single-dash long flags of the flag
// package (-json, -run TEXT) into --json, --run TEXT for the command
// named, a flag it inherits from its group too; one letter after a dash
// stays a shorthand, an unknown name stays for cobra to report, and
// nothing after "--" changes.
func TestGoStyleArgs(t *testing.T) {
	root := (&cli{ctx: context.Background(), e: &env{}}).tree()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"run", "-json", "task"}, []string{"run", "--json", "task"}},
		{[]string{"run", "task", "-json=false"}, []string{"run", "task", "--json=false"}},
		{[]string{"test", "-v", "-run", "tool"}, []string{"test", "-v", "--run", "tool"}},
		{[]string{"validate", "-c=x.hcl", "-json"}, []string{"validate", "-c=x.hcl", "--json"}},
		{[]string{"validate", "-config", "x.hcl"}, []string{"validate", "--config", "x.hcl"}},
		{[]string{"run", "--", "-json"}, []string{"run", "--", "-json"}},
		{[]string{"run", "-nosuch"}, []string{"run", "-nosuch"}},
		{[]string{"run", "-help"}, []string{"run", "--help"}},
		{[]string{"sessions", "show", "-html", "last"}, []string{"sessions", "show", "--html", "last"}},
		{[]string{"sessions", "-config", "x.hcl", "show", "-json", "last"}, []string{"sessions", "--config", "x.hcl", "show", "--json", "last"}},
		{[]string{"-version"}, []string{"version"}},
		{[]string{"--version"}, []string{"version"}},
		{[]string{"-help"}, []string{"--help"}},
	} {
		if got := goStyleArgs(root, slices.Clone(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("goStyleArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCommandFlags: each command parses its own flags and only those: a
// sibling's flag is unknown (exit 2), a group's flag reaches its commands,
// the one-letter flags have their long names and, as the flag package
// took them, --c and --a.
func TestCommandFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		code  int
		pos   []string
		flags map[string]string
	}{
		{[]string{"sessions", "list", "--older-than", "3d"}, exitUsage, nil, nil},
		{[]string{"sessions", "list", "--html"}, exitUsage, nil, nil},
		{[]string{"sessions", "list", "-n", "3"}, exitOK, []string{}, map[string]string{"limit": "3"}},
		{[]string{"sessions", "--limit", "2", "--json"}, exitOK, []string{}, map[string]string{"limit": "2", "json": "true"}},
		{[]string{"sessions", "rm", "--json", "x"}, exitUsage, nil, nil},
		{[]string{"sessions", "show", "--html", "last"}, exitOK, []string{"last"}, map[string]string{"html": "true", "json": "false"}},
		{[]string{"sessions", "-c", "x.hcl", "prune", "--older-than", "3d"}, exitOK, []string{}, map[string]string{"config": "x.hcl", "older-than": "3d"}},
		{[]string{"sessions", "prune", "--c", "x.hcl"}, exitOK, []string{}, map[string]string{"config": "x.hcl"}},
		{[]string{"tools", "--a", "main", "--config=y.hcl"}, exitOK, []string{}, map[string]string{"agent": "main", "config": "y.hcl"}},
		{[]string{"run", "-a", "main", "hello", "-c", "z.hcl", "--json"}, exitOK, []string{"hello"}, map[string]string{"agent": "main", "config": "z.hcl", "json": "true"}},
		{[]string{"plugin", "inspect", "-c", "x.hcl", "a.wasm"}, exitUsage, nil, nil},
		{[]string{"mcp", "login", "--json", "gh"}, exitUsage, nil, nil},
	} {
		var names []string
		for n := range tc.flags {
			names = append(names, n)
		}
		pos, flags, code := parsed(t, tc.args, names...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d", tc.args, code, tc.code)
			continue
		}
		if code != exitOK {
			continue
		}
		if pos == nil {
			pos = []string{}
		}
		if !slices.Equal(pos, tc.pos) {
			t.Errorf("%q: positional %q, want %q", tc.args, pos, tc.pos)
		}
		for n, v := range tc.flags {
			if flags[n] != v {
				t.Errorf("%q: --%s %q, want %q", tc.args, n, flags[n], v)
			}
		}
	}
}
