package defaults

import (
	"testing"
	"time"
)

// TestOr: zero and negative values take the default, others stay.
func TestOr(t *testing.T) {
	if got := Or(0, 5); got != 5 {
		t.Errorf("Or(0, 5) = %d", got)
	}
	if got := Or(-1, 5); got != 5 {
		t.Errorf("Or(-1, 5) = %d", got)
	}
	if got := Or(3, 5); got != 3 {
		t.Errorf("Or(3, 5) = %d", got)
	}
	if got := Or(uint64(0), Memory); got != Memory {
		t.Errorf("Or(0, Memory) = %d", got)
	}
	if got := Or(time.Duration(0), Timeout); got != Timeout {
		t.Errorf("Or(0, Timeout) = %v", got)
	}
	if got := Or(time.Second, Timeout); got != time.Second {
		t.Errorf("Or(1s, Timeout) = %v", got)
	}
}
