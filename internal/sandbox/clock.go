package sandbox

import (
	crand "crypto/rand"
	"io"
	"math/rand/v2"
	"time"
)

// FakeEpochNanos is where the fake wall clock starts: midnight UTC
// 2022-01-01 (wazero's fake clock's epoch).
const FakeEpochNanos = 1640995200 * int64(time.Second)

// seed is the seed of the random stream a guest without the random grant
// reads: every instance sees the same bytes.
var seed = [32]byte{'a', 'g', 'e', 'n', 't', 'h', 'o', 's', 't'}

// Random is the random source of an instance: the host's cryptographic
// randomness with the random grant, else a fresh ChaCha8 stream from the
// fixed seed, the same for every instance of every kind.
func Random(granted bool) io.Reader {
	if granted {
		return crand.Reader
	}
	return rand.NewChaCha8(seed)
}

// FakeClock is the clock of an instance without the clock grant: the wall
// clock reads FakeEpochNanos and the monotonic clock 0 at first, and each
// reading advances by 1 ms, so that a guest that loops on the clock ends
// and every run sees the same times. One instance's guest reads it from
// one goroutine.
type FakeClock struct {
	wall, mono int64 // readings so far
}

// Walltime reads the wall clock, as seconds and nanoseconds since the
// Unix epoch.
func (c *FakeClock) Walltime() (sec int64, nsec int32) {
	n := FakeEpochNanos + c.wall*int64(time.Millisecond)
	c.wall++
	return n / int64(time.Second), int32(n % int64(time.Second))
}

// Nanotime reads the monotonic clock, in nanoseconds.
func (c *FakeClock) Nanotime() int64 {
	n := c.mono * int64(time.Millisecond)
	c.mono++
	return n
}
