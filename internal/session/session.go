// Package session persists runs under data_dir/sessions/: one directory per
// session holding meta.json and events.jsonl. Every event (messages
// included) is appended as it happens, before anyone sees it, so a killed
// process loses at most the event in flight (with Record and Flush, the
// events since the loop last began to wait); a background syncer flushes
// the file to disk after each burst of events (group commit), at most once
// every syncGap, so an operating-system crash or power loss loses at most
// the events of the last syncGap and a sync. Close waits for the final sync. A session can be continued: its top-level messages
// become the history of the next run. One run at a time writes a session:
// an open Session holds an exclusive lock on the session's lock file, and a
// second Open or Create of it fails with ErrBusy.
package session

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// Meta describes a session.
type Meta struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	Created time.Time `json:"created"`
	Config  string    `json:"config"`
}

// Session is an open session being appended to. It is safe for concurrent use.
type Session struct {
	Meta
	dir string

	mu   sync.Mutex
	f    *os.File
	lock *os.File // holds the session's lock until Close
	err  error    // first write or sync error; later writes are skipped
	// closing is set by Close: no more writes.
	closing bool
	// buf holds the events Record encoded and not yet written, and is
	// reused for the next ones (under mu).
	buf []byte

	// dirty wakes the syncer after a write (buffered: one wake-up covers
	// every write before the sync starts); synced is closed when the
	// syncer has ended.
	dirty  chan struct{}
	synced chan struct{}
	// stop is closed by Close: the syncer stops waiting out syncGap.
	stop chan struct{}
	// gap is the least time between two syncs (syncGap; tests change it).
	gap time.Duration
	// sync flushes the file to disk (f.Sync; tests replace it).
	sync func() error
}

// validID reports whether id is a session id: 1 to 100 of A–Z, a–z, 0–9,
// '_', '.' and '-'. A loop, not the regexp ^[A-Za-z0-9_.-]{1,100}$: that
// compiles 100 copies of its class (95 KB, a quarter of a millisecond) in
// every process's start-up, whatever the command.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 100 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// ErrNotFound is returned for a session id that does not exist.
var ErrNotFound = errors.New("session not found")

// Dir is the sessions directory under a data dir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "sessions") }

// NewID returns a fresh, sortable session id.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Create makes a new session directory and opens it for appending, holding
// its lock until Close. Its directories and files are private to the user
// (see ErrNotPrivate); a data_dir that is not is refused.
func Create(dataDir string, m Meta) (*Session, error) {
	if m.ID == "" {
		m.ID = NewID(time.Now())
	}
	if !validID(m.ID) {
		return nil, fmt.Errorf("invalid session id %q: use letters, digits, '.', '_' and '-'", m.ID)
	}
	if m.Created.IsZero() {
		m.Created = time.Now().UTC()
	}
	sessions, err := openSessions(dataDir, true)
	if err != nil {
		return nil, createError(err)
	}
	defer sessions.Close()
	if err := sessions.Mkdir(m.ID, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create session: session %s already exists", m.ID)
		}
		return nil, createError(err)
	}
	dir := filepath.Join(Dir(dataDir), m.ID)
	d, err := openDir(sessions, dir, m.ID)
	if err != nil {
		return nil, createError(err)
	}
	defer d.Close()
	lk, err := lock(d, dir, m.ID)
	if err != nil {
		return nil, err
	}
	meta, _ := json.MarshalIndent(m, "", "  ")
	f, err := openFile(d, filepath.Join(dir, "meta.json"), "meta.json", os.O_WRONLY)
	if err == nil {
		_, err = f.Write(append(meta, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		lk.Close()
		return nil, createError(err)
	}
	return open(d, dir, m, lk)
}

// createError words a failure of Create; a refusal (ErrNotPrivate) says
// all by itself.
func createError(err error) error {
	if errors.Is(err, ErrNotPrivate) {
		return err
	}
	return fmt.Errorf("create session: %w", err)
}

// Open opens an existing session for appending (to continue it), holding
// its lock until Close. It fails with ErrBusy (a *BusyError naming the
// holder) while another run has the session open; read the events after
// Open, so that no other run appends in between. A data_dir or session
// that is not private to the user is refused (ErrNotPrivate); entries
// that group or others may read are made private.
func Open(dataDir, id string) (*Session, error) {
	if !validID(id) {
		return nil, fmt.Errorf("invalid session id %q", id)
	}
	dir := filepath.Join(Dir(dataDir), id)
	d, err := openExisting(dataDir, dir, id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return nil, err
	}
	defer d.Close()
	m, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	lk, err := lock(d, dir, id)
	if err != nil {
		return nil, err
	}
	return open(d, dir, m, lk)
}

// openExisting opens the directory of session id, checking it and its
// meta.json (fs.ErrNotExist when either is missing).
func openExisting(dataDir, dir, id string) (*os.Root, error) {
	sessions, err := openSessions(dataDir, false)
	if err != nil {
		return nil, err
	}
	defer sessions.Close()
	d, err := openDir(sessions, dir, id)
	if err != nil {
		return nil, err
	}
	if err := checkFile(d, filepath.Join(dir, "meta.json"), "meta.json"); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// open opens events.jsonl in d, the session directory dir, for appending.
func open(d *os.Root, dir string, m Meta, lk *os.File) (*Session, error) {
	f, err := openFile(d, filepath.Join(dir, "events.jsonl"), "events.jsonl", os.O_WRONLY|os.O_APPEND)
	if err != nil {
		lk.Close()
		if errors.Is(err, ErrNotPrivate) {
			return nil, err
		}
		return nil, fmt.Errorf("open session: %w", err)
	}
	s := &Session{Meta: m, dir: dir, f: f, lock: lk, dirty: make(chan struct{}, 1), synced: make(chan struct{}), stop: make(chan struct{}), gap: syncGap, sync: f.Sync}
	go s.syncer()
	return s, nil
}

// syncGap is the least time between two syncs of a session. An fsync
// costs CPU as well as latency, and a step writes several bursts of events;
// one sync per syncGap bounds that to a few syncs a second, and what a
// power loss can lose to the last syncGap of events. A
// killed process loses nothing either way: each event is in the file
// before Emit returns.
const syncGap = 50 * time.Millisecond

// syncer syncs the file after writes, until Close closes dirty. Writes go
// on while it syncs or waits out the gap; the next wake-up covers them.
// Syncing off the loop's path keeps a disk's fsync latency out of every
// step.
func (s *Session) syncer() {
	defer close(s.synced)
	var gap *time.Timer
	for range s.dirty {
		if err := s.sync(); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
		if gap == nil {
			gap = time.NewTimer(s.gap)
		} else {
			gap.Reset(s.gap)
		}
		select {
		case <-gap.C:
		case <-s.stop: // Close syncs once more, covering every write
			gap.Stop()
			return
		}
	}
}

func readMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("%w: %s", ErrNotFound, filepath.Base(dir))
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("session %s: meta.json: %w", filepath.Base(dir), err)
	}
	return m, nil
}

// Path is the session's directory.
func (s *Session) Path() string { return s.dir }

// Emit appends one event, in its wire form (the JSON of loop.Event, the
// same as `run --events` prints), written to the file before Emit returns;
// the syncer flushes it to disk soon after. It implements loop.Sink.
func (s *Session) Emit(e loop.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record(e) {
		s.write()
	}
}

// Record adds e to the events written at the next Flush (or Emit, or
// Close): for a loop that calls Flush before it waits on anything
// (loop.Flusher), so that the events between two waits go out in one
// write. A killed process then loses at most the events since the loop
// last began to wait, none of which it waited on. More than maxKeptBuf of
// held events are written at once.
func (s *Session) Record(e loop.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record(e) && len(s.buf) > maxKeptBuf {
		s.write()
	}
}

// Flush writes the events Record held.
func (s *Session) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.write()
}

// record encodes e after the events held (under mu); false when nothing
// is written any more.
func (s *Session) record(e loop.Event) bool {
	if s.err != nil || s.f == nil || s.closing {
		return false
	}
	// AppendJSON into a buffer kept for the next events: no allocation
	// per event (a buffer grown by a very long message is let go).
	b, err := e.AppendJSON(s.buf)
	if err != nil {
		return false
	}
	s.buf = append(b, '\n')
	return true
}

// write writes the events held (under mu).
func (s *Session) write() {
	if len(s.buf) == 0 || s.err != nil || s.f == nil {
		return
	}
	_, err := s.f.Write(s.buf)
	if cap(s.buf) <= maxKeptBuf {
		s.buf = s.buf[:0]
	} else {
		s.buf = nil
	}
	if err != nil {
		s.err = err
		return
	}
	select {
	case s.dirty <- struct{}{}:
	default: // a sync is already due; it will cover this write
	}
}

// maxKeptBuf is the largest event buffer a session keeps between events.
const maxKeptBuf = 64 << 10

// Close flushes and closes the session and releases its lock. It reports
// the first write error.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil || s.closing {
		return s.err
	}
	s.write()
	s.closing = true
	// The last sync: wait for the syncer (it takes mu on an error) outside
	// the lock, then flush whatever it had not covered.
	close(s.stop)
	close(s.dirty)
	s.mu.Unlock()
	<-s.synced
	s.mu.Lock()
	if err := s.sync(); err != nil && s.err == nil {
		s.err = err
	}
	err := s.f.Close()
	s.f = nil
	if s.lock != nil {
		s.lock.Close() // after the last write: the next run sees every event
		s.lock = nil
	}
	if s.err != nil {
		return fmt.Errorf("session %s: %w", s.ID, s.err)
	}
	return err
}

// Events reads every event of a session. A torn last line (a crash while
// writing) is skipped. Events stored by older versions, with the result
// nested, are read too (loop.Event's UnmarshalJSON reads both forms).
// Lines are read whole whatever their length: the writer puts no bound on
// an event (a tool result as long as the tool's max_output allows), so
// neither may the reader. Memory is the events read plus the longest line.
func Events(dataDir, id string) (Meta, []loop.Event, error) {
	if !validID(id) {
		return Meta{}, nil, fmt.Errorf("invalid session id %q", id)
	}
	dir := filepath.Join(Dir(dataDir), id)
	m, err := readMeta(dir)
	if err != nil {
		return m, nil, err
	}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil, nil
	}
	if err != nil {
		return m, nil, err
	}
	defer f.Close()
	var evs []loop.Event
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		line, err = readLine(r, line[:0])
		if len(line) > 0 {
			var e loop.Event
			if json.Unmarshal(line, &e) == nil {
				evs = append(evs, e)
			}
		}
		if err == io.EOF {
			return m, evs, nil
		}
		if err != nil {
			return m, evs, fmt.Errorf("session %s: events.jsonl: %w", id, err)
		}
		if cap(line) > maxKeptLine {
			line = nil // a very long line is let go once read
		}
	}
}

// maxKeptLine is the largest line buffer Events reuses for the next line.
const maxKeptLine = 1 << 20

// readLine appends the next line of r (without its newline) to buf, however
// long it is; the error is io.EOF after the last line.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		frag, err := r.ReadSlice('\n')
		buf = append(buf, frag...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return buf[:len(buf)-1], nil
		}
		return buf, err
	}
}

// History returns the top-level (depth 0) messages of a session, without
// system messages, for continuing it: the history the next request of the
// session would carry. Compaction events are applied by the loop's own rule,
// loop.ApplyCompaction: the messages before the last Kept ones are replaced
// by the summary (a compaction event without Kept, written by an older
// version, or whose Kept does not fit, leaves the messages as they were).
// Tool calls without a tool message (a run killed mid-step) are answered
// with loop.AbortedAnswer so the history stays valid for providers; this
// repair is also
// applied where each continued run started, because that run was given the
// repaired history and its compaction counts refer to it.
func History(evs []loop.Event) []loop.Message {
	var msgs []loop.Message
	for _, e := range evs {
		if e.Depth != 0 {
			continue
		}
		switch e.Type {
		case loop.EventRunStart:
			msgs = repair(msgs)
		case loop.EventMessage:
			if e.Msg != nil && e.Msg.Role != loop.RoleSystem {
				msgs = append(msgs, *e.Msg)
			}
		case loop.EventCompaction:
			if e.Msg != nil {
				msgs, _ = loop.ApplyCompaction(msgs, *e.Msg, e.Kept)
			}
		}
	}
	return repair(msgs)
}

// repair answers every unanswered tool call with an aborted result, placed
// right after the tool messages that follow its assistant message.
func repair(msgs []loop.Message) []loop.Message {
	out := make([]loop.Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		out = append(out, m)
		if m.Role != loop.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for i+1 < len(msgs) && msgs[i+1].Role == loop.RoleTool {
			i++
			answered[msgs[i].ToolCallID] = true
			out = append(out, msgs[i])
		}
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				out = append(out, loop.AbortedAnswer(c))
			}
		}
	}
	return out
}

// List returns the metas of every session, newest first.
func List(dataDir string) ([]Meta, error) {
	ents, err := os.ReadDir(Dir(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ms []Meta
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if m, err := readMeta(filepath.Join(Dir(dataDir), e.Name())); err == nil {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if !ms[i].Created.Equal(ms[j].Created) {
			return ms[i].Created.After(ms[j].Created)
		}
		return ms[i].ID > ms[j].ID
	})
	return ms, nil
}
