package httplimits

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestCheck refuses a limit flag without --http and each value out of
// range, naming the flag; the defaults pass.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		args     []string
		withHTTP bool
		want     string // "" for no error
	}{
		{nil, false, ""},
		{[]string{"--max-conns", "4"}, true, ""},
		{[]string{"--read-timeout", "3s"}, false, "--read-timeout is for --http; stdio serves one client"},
		{[]string{"--max-conns", "0"}, true, "--max-conns 0: must be at least 1 (a client uses two or more: its event stream and its requests)"},
		{[]string{"--max-sessions", "0"}, true, "--max-sessions 0: must be at least 1"},
		{[]string{"--session-timeout", "-1s"}, true, "--session-timeout -1s: must not be negative (0 keeps idle sessions open)"},
		{[]string{"--read-timeout", "0"}, true, "--read-timeout 0s: must be positive"},
		{[]string{"--resume-buffer", "100"}, true, "--resume-buffer 100B: must be 0 (no resumable streams) or at least 1KiB"},
		{[]string{"--resume-buffer", "0", "--resume-buffer-total", "0"}, true, ""},
		{[]string{"--resume-buffer", "2MiB", "--resume-buffer-total", "1MiB"}, true, "--resume-buffer-total 1MiB: must be at least --resume-buffer (2MiB)"},
	} {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		l := Declare(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		got := ""
		if err := Check(fs, c.withHTTP, *l); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q (http %v): %q, want %q", c.args, c.withHTTP, got, c.want)
		}
	}
}

// TestSize reads sizes as agents.hcl writes them and refuses others.
func TestSize(t *testing.T) {
	var s size
	if err := s.Set("8MiB"); err != nil || s != 8<<20 || s.String() != "8MiB" {
		t.Errorf("8MiB: %v %d %q", err, s, s.String())
	}
	if err := s.Set("eight"); err == nil {
		t.Errorf("eight: no error")
	}
}
