package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize is the most file() reads: 4 MiB. agents.hcl holds
// configuration and prompts, not data; a bigger file is refused.
const MaxFileSize = 4 << 20

// errTooBig and errNotRegular are readConfigFile's refusals; the caller
// words them for the user.
var (
	errTooBig     = errors.New("too big")
	errNotRegular = errors.New("not a regular file")
)

// readConfigFile reads a regular file of at most MaxFileSize bytes. It
// never blocks on, or reads without end from, anything else: the path is
// checked before opening (opening some devices has effects), opened
// non-blocking where the system has that (a FIFO replaced in between does
// not wait for a writer), checked again on the open file, and read through
// a limit (a file growing under us stops at the cap). size is the size
// seen, for messages; mode the file's type when it is not regular.
func readConfigFile(path string) (b []byte, size int64, mode fs.FileMode, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, st.Mode().Type(), errNotRegular
	}
	if st.Size() > MaxFileSize {
		return nil, st.Size(), 0, errTooBig
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, 0, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, st.Mode().Type(), errNotRegular
	}
	b, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, 0, 0, err
	}
	if len(b) > MaxFileSize {
		return nil, max(st.Size(), int64(len(b))), 0, errTooBig
	}
	return b, int64(len(b)), 0, nil
}

// kindOf names a file type for a message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	default:
		return fmt.Sprintf("a special file (%s)", m)
	}
}
