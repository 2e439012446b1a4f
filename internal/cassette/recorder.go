package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// Recorder writes every successful model request and its response to a
// cassette file. One Recorder serves every model of a run (subagents
// included); it is safe for concurrent use.
type Recorder struct {
	path string

	mu     sync.Mutex
	f      *os.File
	closed bool
}

// NewRecorder creates (or truncates) the cassette at path, making its
// parent directories. A cassette holds the prompts, the answers and what
// tools read, so it is private to the user whatever the umask: the file
// gets mode 0600 (an existing one is made so) and directories made for it
// 0700. A symbolic link at path is refused, never followed: one planted in
// a shared directory would send the recording to another file.
func NewRecorder(path string) (*Recorder, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cassette: create directory for %s: %w", path, err)
	}
	f, err := create(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: create %s: %w", path, err)
	}
	return &Recorder{path: path, f: f}, nil
}

// errLink is a cassette path that is a symbolic link.
var errLink = errors.New("it is a symbolic link, which a cassette is never written through; give the path of the file itself")

// create opens path for writing, empty and private, without following a
// symbolic link there. A missing file is created exclusively (which never
// follows a link); an existing one is opened, checked to be the entry
// Lstat saw, then truncated, so a link swapped in meanwhile is refused
// before anything is written.
func create(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, errLink
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case !os.SameFile(before, st):
		err = errors.New("it changed while it was being opened; try again")
	case st.Mode().IsRegular(): // not a device or pipe the user named
		err = f.Truncate(0)
		if perm := st.Mode().Perm(); err == nil && perm&0o077 != 0 {
			err = f.Chmod(perm & 0o700)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Wrap returns a model that sends requests to inner and records each
// successful exchange under modelID (the provider-side model id).
func (r *Recorder) Wrap(modelID string, inner loop.Model) loop.Model {
	return &recording{r: r, modelID: modelID, inner: inner}
}

// Close closes the cassette file. Requests recorded after Close fail.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("cassette: close %s: %w", r.path, err)
	}
	return nil
}

// errClosed is returned for exchanges that end after Close.
var errClosed = errors.New("recorder closed")

// append writes one entry and syncs it to disk.
func (r *Recorder) append(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cassette: encode entry for %s: %w", r.path, err)
	}
	return r.appendLine(b)
}

// appendLine writes one line (b, without its newline) and syncs it.
func (r *Recorder) appendLine(b []byte) error {
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("cassette: record to %s: %w", r.path, errClosed)
	}
	if _, err := r.f.Write(b); err != nil {
		return fmt.Errorf("cassette: record to %s: %w", r.path, err)
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("cassette: sync %s: %w", r.path, err)
	}
	return nil
}

type recording struct {
	r       *Recorder
	modelID string
	inner   loop.Model
}

var _ loop.Model = (*recording)(nil)

func (m *recording) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	canon := Canonical(m.modelID, req) // before the call: inner may not keep req intact
	resp, err := m.inner.Stream(ctx, req, onText)
	if err != nil {
		return resp, err
	}
	if err := m.r.append(Entry{Key: canon.Key(), Request: canon, Response: resp}); err != nil {
		return loop.Response{}, err
	}
	return resp, nil
}
