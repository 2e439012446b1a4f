package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agenthost/agenthost/internal/private"
)

// A session holds the prompts, the answers and whatever the tools read,
// copies of private files included, so what the package writes is private
// to the user, whatever the umask: directories 0700, files 0600.
//
//   - data_dir is created 0700 when missing. It is refused when another
//     user owns it or group or others may write it (someone else could
//     then replace what is in it); one that others may only read is left
//     as it is, since it may be a directory the user chose for more than
//     agenthost and nothing in it is readable through it (below).
//   - data_dir/sessions and everything in it are agenthost's alone: made
//     0700 or 0600, and an entry that group or others may read
//     (as older versions made them) is made private when it is opened;
//     one owned by another user or writable by group or others is refused
//     (agenthost never makes one so: someone else may have changed it).
//   - Nothing below data_dir is followed through a symbolic link: the
//     entries are opened through an os.Root on data_dir, which no name
//     can lead out of, and a link met on the way is refused, so that a
//     link planted as a session directory, events.jsonl or the lock file
//     cannot send a session's writes to another file. data_dir itself may
//     be a link: it is the user's own path.

// ErrNotPrivate marks a data_dir, or an entry under it, that a session is
// not written to because another user could read, change or redirect
// what is written there. The error says what is wrong and how to fix it.
var ErrNotPrivate = errors.New("data_dir is not private")

// notPrivate words a refusal for an owner or mode: the path, what is
// wrong, why it matters and the fix.
func notPrivate(path string, p *private.Problem) error {
	return fmt.Errorf("%w: %s %s; it holds your sessions (prompts, answers, what tools read), which another user could then read or change. "+
		"Fix: %s if nobody else has written there, or set data_dir (host block of agents.hcl) to a directory of your own",
		ErrNotPrivate, path, p.What, p.Fix)
}

// notOwnEntry words a refusal for an entry agenthost did not make: a
// symbolic link, or a file where a directory belongs (or the reverse).
func notOwnEntry(path, what string) error {
	return fmt.Errorf("%w: %s %s, which agenthost never makes there; it does not write a session through it, since it could send the session to another file. "+
		"Fix: remove it if you did not put it there, or set data_dir (host block of agents.hcl) to a directory of your own",
		ErrNotPrivate, path, what)
}

// checkEntry refuses fi, the Lstat of path, unless it is a directory (dir)
// or a regular file (!dir) that is the user's own and writable by nobody
// else.
func checkEntry(path string, fi fs.FileInfo, dir bool) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return notOwnEntry(path, "is a symbolic link")
	case dir && !fi.IsDir():
		return notOwnEntry(path, "is not a directory")
	case !dir && !fi.Mode().IsRegular():
		return notOwnEntry(path, "is not a regular file")
	}
	if p := private.Check(fi); p != nil {
		return notPrivate(path, p)
	}
	return nil
}

// errChanged is an entry replaced between its check and its opening.
func errChanged(path string) error {
	return fmt.Errorf("%w: %s changed while it was being opened; try again, and if it happens again, look at who else writes in data_dir", ErrNotPrivate, path)
}

// openSessions opens data_dir/sessions, creating both (0700) when create;
// a missing one is fs.ErrNotExist otherwise.
func openSessions(dataDir string, create bool) (*os.Root, error) {
	data, err := private.OpenDir(dataDir, create, func(p *private.Problem) error { return notPrivate(dataDir, p) })
	if err != nil {
		return nil, err
	}
	defer data.Close()
	if create {
		if err := data.Mkdir("sessions", 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return openDir(data, Dir(dataDir), "sessions")
}

// openDir opens the directory name of parent (path names it in messages),
// refusing what checkEntry refuses and making it private.
func openDir(parent *os.Root, path, name string) (*os.Root, error) {
	before, err := parent.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := checkEntry(path, before, true); err != nil {
		return nil, err
	}
	d, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	st, err := d.Stat(".")
	if err == nil && !os.SameFile(before, st) {
		err = errChanged(path)
	}
	if err == nil {
		err = private.Tighten(path, st, func(m fs.FileMode) error { return d.Chmod(".", m) })
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openFile opens the file name of dir with flag (os.O_WRONLY, os.O_RDWR,
// and os.O_APPEND), creating it with mode 0600 when it is missing. An
// existing file must pass checkEntry and is made private; a symbolic link
// is never followed.
func openFile(dir *os.Root, path, name string, flag int) (*os.File, error) {
	// An exclusive create never follows a link: one planted there is
	// ErrExist, and checked below.
	f, err := dir.OpenFile(name, flag|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return f, err
	}
	before, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := checkEntry(path, before, false); err != nil {
		return nil, err
	}
	f, err = dir.OpenFile(name, flag, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !os.SameFile(before, st) {
		err = errChanged(path)
	}
	if err == nil {
		err = private.Tighten(path, st, f.Chmod)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkFile refuses the existing file name of dir as checkEntry does, and
// makes it private.
func checkFile(dir *os.Root, path, name string) error {
	fi, err := dir.Lstat(name)
	if err != nil {
		return err
	}
	if err := checkEntry(path, fi, false); err != nil {
		return err
	}
	return private.Tighten(path, fi, func(m fs.FileMode) error { return dir.Chmod(name, m) })
}
