package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// TestEmitDoesNotWaitForSync: an event is in the file when Emit returns,
// even while a sync to disk is still in progress (group commit off the
// loop's path); Close waits for the syncer and syncs once more.
func TestEmitDoesNotWaitForSync(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 100)
	var syncs atomic.Int32
	s.sync = func() error {
		syncs.Add(1)
		started <- struct{}{}
		<-release
		return s.f.Sync()
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "one"}))
	<-started // the syncer is now blocked in a sync
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "two"}))
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "three"}))
	data, err := os.ReadFile(filepath.Join(dir, "sessions", s.ID, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "\n"); got != 3 {
		t.Fatalf("%d events in the file while a sync is blocked, want 3:\n%s", got, data)
	}
	close(release)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// the blocked sync, one covering "two" and "three" (or not, if the
	// final one did), and the final sync of Close
	if n := syncs.Load(); n < 2 || n > 3 {
		t.Errorf("%d syncs for 3 events and Close, want 2 or 3", n)
	}
	_, evs, err := Events(dir, s.ID)
	if err != nil || len(evs) != 3 {
		t.Fatalf("read back %d events, %v", len(evs), err)
	}
}

// TestSyncErrorReported: a failed sync is reported by Close, and later
// events are not written.
func TestSyncErrorReported(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk gone")
	s.sync = func() error { return boom }
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "one"}))
	if err := s.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close = %v, want the sync error", err)
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "after"}))
	if err := s.Close(); !errors.Is(err, boom) {
		t.Fatalf("second Close = %v", err)
	}
}

// TestSyncGap: after a sync the syncer waits out the gap before the next
// one, whatever is written meanwhile, and Close does not wait for the gap:
// it syncs once more and returns.
func TestSyncGap(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, Meta{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s.gap = time.Hour
	synced := make(chan struct{}, 100)
	var syncs atomic.Int32
	s.sync = func() error {
		syncs.Add(1)
		synced <- struct{}{}
		return s.f.Sync()
	}
	s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: "one"}))
	<-synced
	for i := range 20 {
		s.Emit(msg(0, loop.Message{Role: loop.RoleUser, Content: fmt.Sprint("more ", i)}))
	}
	// Nothing to wait for: a sync within the gap is the failure. Without
	// the gap the syncer syncs again at once.
	select {
	case <-synced:
		t.Fatal("synced again within the gap")
	case <-time.After(200 * time.Millisecond):
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 2 {
		t.Errorf("%d syncs, want 2 (the first, then Close's)", n)
	}
	_, evs, err := Events(dir, s.ID)
	if err != nil || len(evs) != 21 {
		t.Fatalf("read back %d events, %v", len(evs), err)
	}
}
