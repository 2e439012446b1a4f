//go:build darwin || freebsd

package guestmem

// zeroOpen makes b, the open part of a released reservation, all zero
// again when it is small, or returns false (the caller unmaps it).
func zeroOpen(b []byte) bool {
	if len(b) > 256<<10 {
		return false
	}
	clear(b)
	return true
}
