package httpserve

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventStore is the mcp.EventStore of `mcp serve --http`: the events the
// server sent on each session's streams, kept so that a client whose
// event stream dropped (a POST's, mid-call; or the session's GET stream)
// can reconnect with Last-Event-ID and get what it missed, a tool call's
// result included.
//
// It is bounded twice. A session keeps at most perSession bytes: past it,
// its own oldest go first (events, and the records of streams left with
// none). All sessions together keep at most total bytes: past it, the
// oldest of the session that keeps the most go first, so that one busy
// or hostile session cannot push the others' events out below their
// share. A stream opened after its session ended (a request racing the
// session's end) is counted and evicted like any other. An event that alone exceeds
// perSession is sent but not kept, and its stream can no longer be
// resumed. A resume from before an event that is gone is refused (the
// SDK answers 400, "failed to replay events": the session lives on, only
// that stream's past is lost); it never gets a partial replay. A
// session's events go when the session ends: DELETE, --session-timeout,
// or the server stopping.
//
// Bytes are counted as the events' JSON plus a fixed overhead per event
// and per stream, so that many empty streams (one per request) or empty
// events (the priming events) are bounded too.
type eventStore struct {
	perSession, total int64

	mu       sync.Mutex
	n        int64 // bytes kept, all sessions
	sessions map[string]*sessionEvents
}

// The fixed overheads counted per event and per stream (their
// bookkeeping: slice and queue entries, map entries, the stream's id).
const (
	eventOverhead  = 128
	streamOverhead = 512
)

// sessionEvents are the streams of one session.
type sessionEvents struct {
	id      string
	n       int64 // bytes kept by this session
	streams map[string]*streamEvents
	seq     uint64 // ages: one more per event and per stream made
	// events has one entry per event kept (or once kept: the entries of a
	// stream given up are stale, their overhead still counted), oldest
	// first.
	events fifo
	// empties has the streams that keep no event, by the age of their
	// last event (or of their making); an entry whose stream has kept an
	// event since is stale. A stream's record goes when it is older than
	// the oldest event: the streams of old requests go whole before newer
	// ones lose anything.
	empties fifo
}

// fifo is a queue of streams with their ages.
type fifo struct {
	q    []aged
	head int
}

type aged struct {
	st  *streamEvents
	age uint64
}

func (f *fifo) push(st *streamEvents, age uint64) { f.q = append(f.q, aged{st, age}) }
func (f *fifo) len() int                          { return len(f.q) - f.head }
func (f *fifo) front() aged                       { return f.q[f.head] }

func (f *fifo) pop() aged {
	a := f.q[f.head]
	f.q[f.head] = aged{}
	f.head++
	if f.head > 64 && f.head*2 > len(f.q) {
		f.q = append([]aged(nil), f.q[f.head:]...)
		f.head = 0
	}
	return a
}

// streamEvents are the kept events of one stream: the events with
// indices first, first+1, ... The SDK numbers a stream's events from 0,
// one per Append, and names them in event ids as STREAM_INDEX.
type streamEvents struct {
	id        string
	first     int
	data      [][]byte
	ages      []uint64 // of data's events
	lost      bool     // an event was not kept: the stream cannot be resumed
	inEmpties bool
}

func newEventStore(perSession, total int64) *eventStore {
	return &eventStore{perSession: perSession, total: total, sessions: map[string]*sessionEvents{}}
}

// Open implements mcp.EventStore: it makes the record of a new stream.
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream(sessionID, streamID)
	s.trim(s.sessions[sessionID])
	return nil
}

// stream returns the session's record and the stream's, making them if
// need be.
func (s *eventStore) stream(sessionID, streamID string) (*sessionEvents, *streamEvents) {
	ss := s.sessions[sessionID]
	if ss == nil {
		ss = &sessionEvents{id: sessionID, streams: map[string]*streamEvents{}}
		s.sessions[sessionID] = ss
	}
	st := ss.streams[streamID]
	if st == nil {
		st = &streamEvents{id: streamID}
		ss.streams[streamID] = st
		s.charge(ss, streamOverhead+int64(len(streamID)))
		ss.seq++
		s.markEmpty(ss, st, ss.seq)
	}
	return ss, st
}

// Append implements mcp.EventStore: it keeps data as the stream's next
// event, then evicts what the bounds require.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh := s.lookup(sessionID, streamID) == nil
	ss, st := s.stream(sessionID, streamID)
	cost := eventOverhead + int64(len(data))
	if fresh || st.lost || cost+streamOverhead+int64(len(streamID)) > s.perSession {
		// Appended to without being opened, or after its record was
		// evicted (where its events stand is not known), or too big.
		s.giveUp(ss, st)
		s.trim(ss)
		return nil
	}
	ss.seq++
	st.data = append(st.data, data)
	st.ages = append(st.ages, ss.seq)
	ss.events.push(st, ss.seq)
	s.charge(ss, cost)
	s.trim(ss)
	return nil
}

// giveUp drops the stream's events and marks it lost: no resume of it
// can be answered whole. Its entries in events stay (stale) until
// evicted.
func (s *eventStore) giveUp(ss *sessionEvents, st *streamEvents) {
	for _, d := range st.data {
		s.charge(ss, -int64(len(d)))
	}
	st.first += len(st.data)
	st.data, st.ages = nil, nil
	st.lost = true
	s.markEmpty(ss, st, ss.seq)
}

// markEmpty queues st, which keeps no event, for the eviction of its
// record, at age.
func (s *eventStore) markEmpty(ss *sessionEvents, st *streamEvents, age uint64) {
	if !st.inEmpties && len(st.data) == 0 {
		st.inEmpties = true
		ss.empties.push(st, age)
	}
}

func (s *eventStore) charge(ss *sessionEvents, n int64) {
	ss.n += n
	s.n += n
}

// trim evicts until ss is within perSession and the store within total.
func (s *eventStore) trim(ss *sessionEvents) {
	for ss.n > s.perSession && s.evict(ss) {
	}
	for s.n > s.total {
		var big *sessionEvents
		for _, o := range s.sessions {
			if big == nil || o.n > big.n {
				big = o
			}
		}
		if big == nil || !s.evict(big) {
			return
		}
	}
}

// evict drops the session's oldest event or empty stream record; it
// reports whether it dropped anything. A session left with nothing is
// forgotten.
func (s *eventStore) evict(ss *sessionEvents) bool {
	defer func() {
		if len(ss.streams) == 0 && ss.events.len() == 0 && s.sessions[ss.id] == ss {
			delete(s.sessions, ss.id)
		}
	}()
	for ss.empties.len() > 0 && len(ss.empties.front().st.data) > 0 {
		ss.empties.pop().st.inEmpties = false // stale: it keeps an event
	}
	switch {
	case ss.events.len() > 0 && (ss.empties.len() == 0 || ss.events.front().age < ss.empties.front().age):
		a := ss.events.pop()
		st := a.st
		s.charge(ss, -eventOverhead)
		if len(st.ages) > 0 && st.ages[0] == a.age {
			s.charge(ss, -int64(len(st.data[0])))
			st.data[0] = nil
			st.data, st.ages = st.data[1:], st.ages[1:]
			st.first++
			s.markEmpty(ss, st, a.age)
		}
		return true
	case ss.empties.len() > 0:
		st := ss.empties.pop().st
		st.inEmpties = false
		delete(ss.streams, st.id)
		s.charge(ss, -(streamOverhead + int64(len(st.id))))
		return true
	}
	return false
}

// After implements mcp.EventStore: the stream's events after index, or
// mcp.ErrEventsPurged when any of them is no longer kept.
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var out [][]byte
	var err error
	switch st := s.lookup(sessionID, streamID); {
	case st == nil:
		err = fmt.Errorf("stream %q of session %q: %w (evicted, or never opened)", streamID, sessionID, mcp.ErrEventsPurged)
	case st.lost || index+1 < st.first:
		err = fmt.Errorf("stream %q of session %q, after event %d: %w (past the resume buffer)", streamID, sessionID, index, mcp.ErrEventsPurged)
	case index+1-st.first < len(st.data):
		out = append(out, st.data[index+1-st.first:]...)
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range out {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (s *eventStore) lookup(sessionID, streamID string) *streamEvents {
	if ss := s.sessions[sessionID]; ss != nil {
		return ss.streams[streamID]
	}
	return nil
}

// SessionClosed implements mcp.EventStore: the session's events go.
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[sessionID]; ss != nil {
		s.n -= ss.n
		delete(s.sessions, sessionID)
	}
	return nil
}

// kept returns the bytes kept by all sessions and by sessionID.
func (s *eventStore) kept(sessionID string) (total, session int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[sessionID]; ss != nil {
		session = ss.n
	}
	return s.n, session
}

// SSERetry is the reconnection delay, in milliseconds, that an event
// stream of `mcp serve --http` asks a client to wait before it resumes a
// dropped stream (the SSE retry field).
const SSERetry = "1000"

// retryWriter adds the SSE retry field to the first event of an event
// stream the SDK writes (a POST's priming event, the GET stream's first
// bytes), which the SDK does not send: a client learns how soon to
// resume. The field and the SDK's event are one event to the client.
type retryWriter struct {
	http.ResponseWriter
	started bool
}

func (w *retryWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.started = true
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			if _, err := w.ResponseWriter.Write([]byte("retry: " + SSERetry + "\n")); err != nil {
				return 0, err
			}
		}
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (Flush).
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
