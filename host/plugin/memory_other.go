//go:build !(linux || darwin || freebsd)

package plugin

import "context"

// Elsewhere guest memories are wazero's own Go slices.

type instanceMemory struct{}

func withInstanceMemory(ctx context.Context) (context.Context, *instanceMemory) {
	return ctx, &instanceMemory{}
}

func (*instanceMemory) release() {}
