package loop

import (
	"context"

	"github.com/agenthost/agenthost/internal/defaults"
)

// Slots bound the tool calls that run at once: a call takes a slot before
// it starts and gives it back when it ends, and a call that finds none free
// waits. One Slots may serve many runs at once (Runner.Slots) and callers
// outside the loop too, so that a process serving many runs keeps the
// plugin instances it holds, and so its memory, within one bound. It is
// safe for concurrent use.
type Slots struct {
	c chan struct{} // holds a value per slot taken
}

// NewSlots returns n slots; n below 1 means defaults.MaxParallelTools.
func NewSlots(n int) *Slots {
	if n < 1 {
		n = defaults.MaxParallelTools
	}
	return &Slots{c: make(chan struct{}, n)}
}

// Size is the number of slots.
func (s *Slots) Size() int { return cap(s.c) }

// Acquire takes a slot, waiting for one to be free, and returns nil; or it
// returns ctx's error, having taken none, once ctx ends (a ctx already
// ended takes none even when a slot is free). Waiters are served in about
// the order they came.
func (s *Slots) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.TryAcquire() {
		return nil
	}
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot if one is free, without waiting.
func (s *Slots) TryAcquire() bool {
	select {
	case s.c <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives back a slot taken by Acquire or TryAcquire.
func (s *Slots) Release() {
	select {
	case <-s.c:
	default:
		panic("loop: Slots.Release without a slot taken")
	}
}
