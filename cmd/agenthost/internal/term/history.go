package term

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agenthost/agenthost/internal/private"
)

// The chat's input history is kept across chats in the user's state
// directory, one JSON string a line (a pasted line may hold newlines). It
// holds what the user typed, so it is private like a session: the
// directory 0700, the file 0600, neither a symbolic link nor another
// user's, and it is bounded: at start the last historyMaxBytes of the
// file are read and, when that is more than historyMax lines or the file
// was longer, the file is rewritten with the last historyMax lines.
const (
	historyFile     = "chat_history"
	historyMax      = 1000
	historyMaxBytes = 1 << 20
	// historyMaxLine is the longest line kept: a longer one (a long
	// paste, up to MaxLine runes) is sent but not kept.
	historyMaxLine = 16 << 10
)

// historyDir is $XDG_STATE_HOME/agenthost, or ~/.local/state/agenthost.
func historyDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agenthost"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("neither $XDG_STATE_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".local", "state", "agenthost"), nil
}

// ChatHistory is the line editor's history (golang.org/x/term's History):
// At(0) is the newest line. Add also appends the line to the file.
type ChatHistory struct {
	lines []string // oldest first
	root  *os.Root // the state directory; nil when the history is not saved
	path  string
}

// OpenHistory loads the history file of the state directory getenv
// names. A problem with it (not private, not readable) is returned with a
// history that is kept in memory only.
func OpenHistory(getenv func(string) string) (*ChatHistory, error) {
	h := &ChatHistory{}
	dir, err := historyDir(getenv)
	if err != nil {
		return h, err
	}
	h.path = filepath.Join(dir, historyFile)
	r, err := private.OpenDir(dir, true, func(p *private.Problem) error {
		return fmt.Errorf("%s %s; fix: %s", dir, p.What, p.Fix)
	})
	if err != nil {
		return h, err
	}
	fail := func(err error) (*ChatHistory, error) {
		r.Close()
		return h, err
	}
	fi, err := r.Lstat(historyFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail(err)
	case !fi.Mode().IsRegular():
		return fail(fmt.Errorf("%s is not a regular file (a symbolic link?); agenthost never makes one so: remove it", h.path))
	default:
		if p := private.Check(fi); p != nil {
			return fail(fmt.Errorf("%s %s; fix: %s", h.path, p.What, p.Fix))
		}
		if err := private.Tighten(h.path, fi, func(m fs.FileMode) error { return r.Chmod(historyFile, m) }); err != nil {
			return fail(err)
		}
		cut, err := h.load(r, fi.Size())
		if err != nil {
			return fail(err)
		}
		if cut || len(h.lines) > historyMax {
			h.lines = h.lines[max(0, len(h.lines)-historyMax):]
			if err := h.rewrite(r); err != nil {
				return fail(err)
			}
		}
	}
	h.root = r
	return h, nil
}

// load reads the last historyMaxBytes of the file; cut tells whether
// there was more. Lines that are not JSON strings are skipped.
func (h *ChatHistory) load(r *os.Root, size int64) (cut bool, err error) {
	f, err := r.OpenFile(historyFile, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if size > historyMaxBytes {
		if _, err := f.Seek(size-historyMaxBytes, io.SeekStart); err != nil {
			return false, err
		}
		cut = true
	}
	b, err := io.ReadAll(io.LimitReader(f, historyMaxBytes))
	if err != nil {
		return false, err
	}
	if cut { // the first line is likely a part: drop it
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, historyMaxBytes)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.lines = append(h.lines, s)
		}
	}
	return cut, nil
}

// rewrite replaces the file with h.lines: a new file renamed into place.
func (h *ChatHistory) rewrite(r *os.Root) error {
	tmp := historyFile + ".new"
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range h.lines {
		b, _ := json.Marshal(l)
		w.Write(append(b, '\n'))
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		r.Remove(tmp)
		return err
	}
	return r.Rename(tmp, historyFile)
}

// Add records a line the user entered; a repeat of the newest is not.
func (h *ChatHistory) Add(line string) {
	if line == "" || len(line) > historyMaxLine || len(h.lines) > 0 && h.lines[len(h.lines)-1] == line {
		return
	}
	h.lines = append(h.lines, line)
	if len(h.lines) > historyMax {
		h.lines = h.lines[len(h.lines)-historyMax:]
	}
	if h.root == nil {
		return
	}
	f, err := h.root.OpenFile(historyFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return // the history goes on in memory
	}
	b, _ := json.Marshal(line)
	f.Write(append(b, '\n')) // one write: chats appending at once do not mix lines
	f.Close()
}

// Len is the number of lines.
func (h *ChatHistory) Len() int { return len(h.lines) }

// At is the line i back from the newest (0).
func (h *ChatHistory) At(i int) string { return h.lines[len(h.lines)-1-i] }

// Close closes the state directory.
func (h *ChatHistory) Close() {
	if h.root != nil {
		h.root.Close()
	}
}
