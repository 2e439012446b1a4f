package hostmem

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestBudget: charges within the limit are taken, one past it is refused
// whole (nothing charged) with an error naming what and the limit, the
// first refusal is kept, and what is given back can be charged again.
func TestBudget(t *testing.T) {
	b := New(100)
	if b.Refused() != nil {
		t.Fatal("a new budget has a refusal")
	}
	if err := b.Charge(60, "a"); err != nil {
		t.Fatal(err)
	}
	err := b.Charge(41, "the result of f")
	if !errors.Is(err, ErrExceeded) {
		t.Fatalf("err = %v, want ErrExceeded", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "the result of f") || !strings.Contains(msg, "budget of 100 bytes") {
		t.Errorf("err = %q", msg)
	}
	if b.Used() != 60 {
		t.Errorf("Used = %d after a refusal, want 60", b.Used())
	}
	if err := b.Charge(40, "b"); err != nil {
		t.Fatalf("charging up to the limit: %v", err)
	}
	b.Charge(1, "c")
	if r := b.Refused(); r == nil || !strings.Contains(r.Error(), "the result of f") {
		t.Errorf("Refused = %v, want the first refusal", r)
	}
	b.Release(70)
	if b.Used() != 30 {
		t.Errorf("Used = %d, want 30", b.Used())
	}
	b.Release(1000)
	if b.Used() != 0 {
		t.Errorf("Used = %d after giving back more than charged, want 0", b.Used())
	}
	if err := b.Charge(100, "d"); err != nil {
		t.Errorf("charging what was given back: %v", err)
	}
	if err := b.Charge(1<<63, "e"); err == nil {
		t.Error("a huge charge was taken")
	}
}

// TestBudgetConcurrent: charges from several goroutines never pass the
// limit together.
func TestBudgetConcurrent(t *testing.T) {
	b := New(1000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if b.Charge(3, "x") == nil {
					mu.Lock()
					taken += 3
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if taken != 999 || b.Used() != 999 {
		t.Errorf("taken %d, used %d, want 999", taken, b.Used())
	}
}
