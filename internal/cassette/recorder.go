package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// NewRecorder creates (or truncates) the cassette at path, with mode 0644,
// making its parent directories.
func NewRecorder(path string) (*Recorder, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cassette: create directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cassette: create %s: %w", path, err)
	}
	return &Recorder{path: path, f: f}, nil
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
