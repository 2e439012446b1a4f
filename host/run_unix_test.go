//go:build unix

package host

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/session"
)

// TestRunRefusesDataDirNotPrivate: a run, new or continuing a session, is
// refused with a usage error (session.ErrNotPrivate, naming no session)
// when data_dir is writable by others or, as root can arrange, owned by
// another user; no request reaches the model and nothing is written.
func TestRunRefusesDataDirNotPrivate(t *testing.T) {
	h, srv := runHost(t, `{"text": "Hello."}`)
	ctx := context.Background()
	first, err := h.Run(ctx, RunRequest{Prompt: "Hi."})
	if err != nil {
		t.Fatal(err)
	}
	data := h.Config.Host.DataDir
	_, before, _ := session.Events(data, first.Session)

	refused := func(t *testing.T, want string) {
		t.Helper()
		for _, id := range []string{"", first.Session} {
			res, err := h.Run(ctx, RunRequest{Prompt: "Hi.", Session: id})
			var ue *UsageError
			if res != nil || !errors.As(err, &ue) || !errors.Is(err, session.ErrNotPrivate) || ue.Session != "" {
				t.Fatalf("Run(session %q) = %v, %v; want a usage error wrapping session.ErrNotPrivate", id, res, err)
			}
			if !strings.Contains(err.Error(), data+" "+want) {
				t.Errorf("Run(session %q): %v; want %s %s", id, err, data, want)
			}
		}
	}
	t.Run("writable by others", func(t *testing.T) {
		if err := os.Chmod(data, 0o777); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(data, 0o700)
		refused(t, "is writable by group and others (mode 0777)")
	})
	t.Run("owned by another user", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to chown")
		}
		if err := os.Chown(data, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		defer os.Chown(data, 0, 0)
		refused(t, "is owned by uid 65534, not by you (uid 0)")
	})

	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the model, want only the first run's", n)
	}
	ms, _ := session.List(data)
	_, after, _ := session.Events(data, first.Session)
	if len(ms) != 1 || len(after) != len(before) {
		t.Errorf("refused runs wrote: %d sessions, %d events (want 1, %d)", len(ms), len(after), len(before))
	}
}
