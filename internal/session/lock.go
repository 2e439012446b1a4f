package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// ErrBusy is returned (as a *BusyError) by Open and Create when another run
// holds the session.
var ErrBusy = errors.New("session in use")

// BusyError says which run holds a session, as far as its lock file tells.
type BusyError struct {
	ID     string
	Holder *Holder // nil when the lock file could not be read
}

func (e *BusyError) Error() string {
	s := "session " + e.ID + " is in use by another run"
	if h := e.Holder; h != nil {
		s += fmt.Sprintf(" (pid %d on %s, started %s)", h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	}
	return s + "; wait for it to end, or stop it"
}

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Holder is what a run holding a session writes into its lock file, for the
// message a second run prints.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// lockName is the lock file in a session directory. It is never removed:
// removing a lock file races with a run that opened it just before.
const lockName = "lock"

// lock takes the session's exclusive lock without waiting. The lock is the
// operating system's (flock on unix, LockFileEx on Windows), held by the
// open file: closing it, or the process ending in any way (SIGKILL
// included), releases it, so no stale lock is left behind.
// The lock file is opened in d, the session directory dir, as a session's
// other files are: private, never through a symbolic link.
func lock(d *os.Root, dir, id string) (*os.File, error) {
	f, err := openFile(d, filepath.Join(dir, lockName), lockName, os.O_RDWR)
	if err != nil {
		if errors.Is(err, ErrNotPrivate) {
			return nil, err
		}
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &BusyError{ID: id, Holder: readHolder(filepath.Join(dir, lockName))}
		}
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)})
	// The holder line is only for messages: failing to write it does not
	// matter to the lock.
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return f, nil
}

// readHolder reads the holder a lock file names, or nil.
func readHolder(path string) *Holder {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// errLocked is lockFile's answer when another open file holds the lock.
var errLocked = errors.New("locked")
