//go:build !(linux || darwin || freebsd)

package guestmem

import "context"

// Elsewhere guest memories are wazero's own Go slices.

// Allocator is nothing here: wazero allocates.
type Allocator struct{}

// With returns ctx unchanged.
func With(ctx context.Context) (context.Context, *Allocator) {
	return ctx, &Allocator{}
}

// Release does nothing.
func (*Allocator) Release() {}
