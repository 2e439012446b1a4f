package plugin

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
)

// goroutineID is the id runtime.Stack prints for the calling goroutine.
func goroutineID() uint64 {
	var b [64]byte
	f := bytes.Fields(b[:runtime.Stack(b[:], false)])
	id, _ := strconv.ParseUint(string(f[1]), 10, 64)
	return id
}

// TestSpawnReusesGoroutines: instances started one after another run on
// a few goroutines, not one each, and Close ends them.
func TestSpawnReusesGoroutines(t *testing.T) {
	r, err := NewRuntime(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	got := make(chan uint64)
	const n = 100
	for range n {
		r.spawn(func() { got <- goroutineID() })
		ids[<-got] = true
	}
	if len(ids) > 10 {
		t.Errorf("%d work items ran on %d goroutines, want a few reused", n, len(ids))
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	if stacks := buf[:runtime.Stack(buf, true)]; bytes.Contains(stacks, []byte("plugin.(*Runtime).worker")) {
		t.Errorf("a worker goroutine outlived Close:\n%s", stacks)
	}
}
