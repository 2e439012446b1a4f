package rootfs

import (
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// ErrnoQuota is what a write or a create beyond a Quota returns to the
// guest. wazero's errno set has no ENOSPC or EDQUOT (it would map them to
// EIO anyway), so it is EIO.
const ErrnoQuota = experimentalsys.EIO

// Quota bounds what one guest instance writes through its mounts: the bytes
// written (write and pwrite) and the bytes a file grows by otherwise (a
// truncate that grows it, a write that starts past its end: the hole
// reads as zeros, as if written), and the directory entries
// created (files, directories, symbolic and hard links). A write that does
// not fit entirely is shortened to what is left (a hole or a truncate is
// charged whole, or refused); once nothing is left,
// writes and creates fail with ErrnoQuota. A nil *Quota allows everything.
// It is safe for concurrent use.
type Quota struct {
	maxBytes, maxEntries int64
	bytes, entries       atomic.Int64
	hitBytes, hitEntries atomic.Bool
}

// NewQuota makes a quota of maxBytes bytes and maxEntries entries.
func NewQuota(maxBytes, maxEntries int64) *Quota {
	return &Quota{maxBytes: maxBytes, maxEntries: maxEntries}
}

// Exceeded reports which limits refused something: a write (bytes) or a
// create (entries).
func (q *Quota) Exceeded() (bytes, entries bool) {
	if q == nil {
		return false, false
	}
	return q.hitBytes.Load(), q.hitEntries.Load()
}

// Used reports the bytes written and the entries created so far.
func (q *Quota) Used() (bytes, entries int64) {
	if q == nil {
		return 0, 0
	}
	return q.bytes.Load(), q.entries.Load()
}

// Reset starts the quota afresh: nothing used, nothing refused. An
// instance that serves many calls resets its quota before each, so the
// limits stay per call.
func (q *Quota) Reset() {
	if q == nil {
		return
	}
	q.bytes.Store(0)
	q.entries.Store(0)
	q.hitBytes.Store(false)
	q.hitEntries.Store(false)
}

// write reserves up to n bytes and returns how many it reserved.
func (q *Quota) write(n int) (int, experimentalsys.Errno) {
	if q == nil {
		return n, 0
	}
	for {
		used := q.bytes.Load()
		room := q.maxBytes - used
		if room <= 0 {
			q.hitBytes.Store(true)
			return 0, ErrnoQuota
		}
		k := int64(n)
		if k > room {
			k = room
		}
		if q.bytes.CompareAndSwap(used, used+k) {
			if k < int64(n) {
				q.hitBytes.Store(true)
			}
			return int(k), 0
		}
	}
}

// grow reserves exactly n bytes, or nothing.
func (q *Quota) grow(n int64) experimentalsys.Errno {
	if q == nil {
		return 0
	}
	for {
		used := q.bytes.Load()
		if n > q.maxBytes-used {
			q.hitBytes.Store(true)
			return ErrnoQuota
		}
		if q.bytes.CompareAndSwap(used, used+n) {
			return 0
		}
	}
}

// unwrite returns n reserved bytes that were not written.
func (q *Quota) unwrite(n int64) {
	if q != nil && n > 0 {
		q.bytes.Add(-n)
	}
}

// create reserves one entry.
func (q *Quota) create() experimentalsys.Errno {
	if q == nil {
		return 0
	}
	if q.entries.Add(1) > q.maxEntries {
		q.entries.Add(-1)
		q.hitEntries.Store(true)
		return ErrnoQuota
	}
	return 0
}

// uncreate returns an entry reserved for a create that failed.
func (q *Quota) uncreate() {
	if q != nil {
		q.entries.Add(-1)
	}
}

// creating runs op, which makes one entry, with an entry reserved for it
// (none past the quota: ErrnoQuota), and returns the entry when op fails.
func (q *Quota) creating(op func() error) experimentalsys.Errno {
	if e := q.create(); e != 0 {
		return e
	}
	e := errno(op())
	if e != 0 {
		q.uncreate()
	}
	return e
}
