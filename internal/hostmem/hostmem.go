// Package hostmem is the sandbox's rule for the memory the host holds on
// a plugin's behalf: one Budget of bytes per call (per instance for an
// Extism arena), charged as each copy is made, before it is made. The
// plugin kinds derive its limit from the plugin's limits.memory, so a
// guest can make the host hold at most as much as it may hold itself,
// whatever its values look like (a list whose elements all point at the
// same bytes, a header set cloned again and again).
package hostmem

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrExceeded is matched (errors.Is) by every refusal of a Budget.
var ErrExceeded = errors.New("host memory budget exceeded")

// Error is a refusal: charging Asked more bytes for What would have taken
// the Budget past its Limit.
type Error struct {
	What         string
	Limit, Asked uint64
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %d more bytes would take what the host holds for the call past its budget of %d bytes", e.What, e.Asked, e.Limit)
}

// Is makes errors.Is(err, ErrExceeded) hold.
func (e *Error) Is(target error) bool { return target == ErrExceeded }

// Budget counts the bytes the host holds for a guest. Its methods may be
// called from several goroutines (an HTTP response read in the
// background charges the same budget as the guest's calls).
type Budget struct {
	limit   uint64
	used    atomic.Uint64
	refused atomic.Pointer[Error]
}

// New makes a budget of limit bytes.
func New(limit uint64) *Budget { return &Budget{limit: limit} }

// Limit is the budget's size in bytes.
func (b *Budget) Limit() uint64 { return b.limit }

// Used is how many bytes are charged now.
func (b *Budget) Used() uint64 { return b.used.Load() }

// Charge takes n bytes for what (a short description: "the result of
// f") before the host makes the copy; it returns an *Error and charges
// nothing when that would pass the limit. The first refusal is kept
// (Refused).
func (b *Budget) Charge(n uint64, what string) error {
	for {
		u := b.used.Load()
		if n > b.limit-u {
			e := &Error{What: what, Limit: b.limit, Asked: n}
			b.refused.CompareAndSwap(nil, e)
			return e
		}
		if b.used.CompareAndSwap(u, u+n) {
			return nil
		}
	}
}

// Release gives back n bytes charged before, once the host no longer
// holds them.
func (b *Budget) Release(n uint64) {
	for {
		u := b.used.Load()
		if b.used.CompareAndSwap(u, u-min(n, u)) {
			return
		}
	}
}

// Refused is the first refusal of the budget, or nil: a refusal a guest
// was told of (an HTTP response it did not get) still fails the call.
func (b *Budget) Refused() error {
	if e := b.refused.Load(); e != nil {
		return e
	}
	return nil
}
