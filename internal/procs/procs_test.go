package procs

import (
	"runtime"
	"testing"
)

func procs() int { return runtime.GOMAXPROCS(0) }

// TestManage: one processor once managed; all of them while something
// holds them or two tool calls are in flight; back to one after.
func TestManage(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	start := runtime.GOMAXPROCS(4)
	t.Cleanup(func() { reset(); runtime.GOMAXPROCS(start) })

	Manage()
	if procs() != 1 {
		t.Fatalf("managed: %d processors, want 1", procs())
	}
	r1, r2 := Hold(), Hold()
	if procs() != 4 {
		t.Fatalf("held: %d processors, want 4", procs())
	}
	r1()
	r1() // a second call changes nothing
	if procs() != 4 {
		t.Fatalf("one hold left: %d processors, want 4", procs())
	}
	r2()
	if procs() != 1 {
		t.Fatalf("released: %d processors, want 1", procs())
	}
	c1 := Call()
	if procs() != 1 {
		t.Fatalf("one call in flight: %d processors, want 1", procs())
	}
	c2 := Call()
	if procs() != 4 {
		t.Fatalf("two calls in flight: %d processors, want 4", procs())
	}
	c1()
	if procs() != 1 {
		t.Fatalf("one call left: %d processors, want 1", procs())
	}
	c2()
	c2()
	if procs() != 1 || calls != 0 || holds != 0 {
		t.Fatalf("all done: %d processors, %d calls, %d holds", procs(), calls, holds)
	}
}

// TestManageUserChoice: a GOMAXPROCS set by the user is kept, and nothing
// changes without Manage.
func TestManageUserChoice(t *testing.T) {
	start := runtime.GOMAXPROCS(3)
	t.Cleanup(func() { reset(); runtime.GOMAXPROCS(start) })

	Hold()()
	Call()()
	if procs() != 3 {
		t.Fatalf("unmanaged: %d processors, want 3", procs())
	}
	t.Setenv("GOMAXPROCS", "3")
	Manage()
	if procs() != 3 || managed {
		t.Fatalf("GOMAXPROCS set: %d processors (managed %v), want 3", procs(), managed)
	}
}
