package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Last is the session reference that names the newest session.
const Last = "last"

// Resolve returns the id of the session ref names: an id, Last (the
// newest session), or a prefix, of any length, that exactly one session's
// id starts with. A ref that is an id, or is not a valid one, is returned
// as it is, for Open or Events to accept or report; a prefix of several
// ids is an error that lists them; a ref that names no session is
// ErrNotFound, saying to use a prefix (and which id has it inside, when one
// does).
func Resolve(dataDir, ref string) (string, error) {
	ms, err := List(dataDir)
	if err != nil {
		return "", err
	}
	if ref == Last {
		if len(ms) == 0 {
			return "", fmt.Errorf("%w: no sessions yet in %s, so no %q", ErrNotFound, Dir(dataDir), Last)
		}
		return ms[0].ID, nil
	}
	var match []string
	for _, m := range ms {
		if m.ID == ref {
			return ref, nil
		}
		if strings.HasPrefix(m.ID, ref) {
			match = append(match, m.ID)
		}
	}
	switch {
	case len(match) == 1 && ref != "":
		return match[0], nil
	case len(match) > 1 && ref != "":
		const show = 5
		more := ""
		if len(match) > show {
			more = fmt.Sprintf(" and %d more", len(match)-show)
			match = match[:show]
		}
		return "", fmt.Errorf("session id prefix %q is ambiguous: %s%s start with it; give more of the id", ref, strings.Join(match, ", "), more)
	}
	// A session is named by the start of its id, as git names a commit;
	// a ref that is only inside an id (its random end, say) is not found,
	// and the error says which id has it.
	if ref == "" || !validID(ref) {
		return ref, nil
	}
	if _, err := os.Lstat(filepath.Join(Dir(dataDir), ref)); !errors.Is(err, fs.ErrNotExist) {
		return ref, nil
	}
	for _, m := range ms {
		if strings.Contains(m.ID, ref) {
			return "", fmt.Errorf("%w: %s; use a prefix of the id, or last (%s has %q inside, not at its start)", ErrNotFound, ref, m.ID, ref)
		}
	}
	return "", fmt.Errorf("%w: %s; use a prefix of the id, or last", ErrNotFound, ref)
}

// Remove deletes session id with everything in it. It takes the session's
// lock first: a session a run holds is refused (ErrBusy), and no run can
// open it while it goes.
func Remove(dataDir, id string) error {
	if !validID(id) {
		return fmt.Errorf("invalid session id %q", id)
	}
	dir := filepath.Join(Dir(dataDir), id)
	d, err := openExisting(dataDir, dir, id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return err
	}
	lk, err := lock(d, dir, id)
	d.Close()
	if err != nil {
		return err
	}
	defer lk.Close()
	sessions, err := openSessions(dataDir, false)
	if err != nil {
		return err
	}
	defer sessions.Close()
	// Through the handle of sessions/: a symbolic link planted in place of
	// the directory is removed, not followed.
	return sessions.RemoveAll(id)
}

// AgeUnits says which units ParseAge accepts; flag help and errors quote it.
const AgeUnits = "s, m (minutes), h, d (days) and w (weeks), such as 90s, 45m, 36h, 30d, 2w; there is no month: use 30d"

// ParseAge parses a duration as time.ParseDuration does (m is minutes, as
// in Go and kubectl), with days (d) and weeks (w) too: 30d, 2w, 36h.
func ParseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("not a duration: use a number and a unit: %s", AgeUnits)
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, bad
			}
			return time.Duration(v * float64(d)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}
