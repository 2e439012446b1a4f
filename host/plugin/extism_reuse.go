package plugin

import (
	"context"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero/api"
)

// Reused Extism instances (reuse = true in the plugin block). Extism's own
// hosts call a plugin many times on one instance; with reuse, agenthost does
// too, within the bounds agenthost/1's reuse has (reuse.go): an instance
// serves the calls, of any of the plugin's tools, of one agent in one run (it waits in the
// run's Scope between calls and is never handed to another run or agent),
// and it is retired after reuseCalls calls, after any failure, tool error,
// host refusal or quota hit, and when the scope closes. The plugin's linear
// memory and globals carry from one call to the next, as under Extism; the
// Extism call state (input, output, error, the kernel's memory blocks) is
// fresh for every call, as are the timeout, the output caps and the write
// quota. Without a scope (no run around the call) every call gets a fresh
// instance, as without reuse.

// extismHeld is a live instance of an Extism plugin between and during
// the calls it serves.
type extismHeld struct {
	i   *instance  // the instance it started as: its context, memory, quota, mounts
	mod api.Module // instantiated and initialised, not yet closed

	mu    sync.Mutex
	cur   *instance // the call being served, nil between calls
	calls int
	once  sync.Once
}

func (h *extismHeld) alive() bool { return h.i.ctx.Err() == nil }

// retire closes the instance and gives back its memory.
func (h *extismHeld) retire() {
	h.once.Do(func() {
		h.i.cancel(errRetired)
		h.mod.Close(context.WithoutCancel(h.i.ctx))
		h.i.mem.Release()
	})
}

// current returns the call being served, or nil.
func (h *extismHeld) current() *instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// heldOutput is the stdout or stderr of a held instance: the current
// call's (output between calls, which a guest has no way to make, is
// dropped).
type heldOutput struct {
	h      *extismHeld
	stderr bool
}

func (w heldOutput) Write(b []byte) (int, error) {
	c := w.h.current()
	if c == nil {
		return len(b), nil
	}
	if w.stderr {
		return c.stderr.Write(b)
	}
	return c.stdout.Write(b)
}

// call serves one call on h and returns the call's instance, ended, for
// extismResult.
func (h *extismHeld) call(ctx context.Context, p *Plugin, t *tool, input []byte) *instance {
	c := p.newExtismInstance(h.i.ctx, ctx, t, t.cfg)
	c.quota, c.mem, c.held, c.instantiated, c.serving = h.i.quota, h.i.mem, h, true, true
	c.quota.Reset()
	h.mu.Lock()
	h.cur = c
	h.calls++
	h.mu.Unlock()
	c.arm(p.limits.Timeout, errTimeout)
	stop := context.AfterFunc(ctx, func() { c.cancel(context.Cause(ctx)) })
	func() {
		defer func() {
			if v := recover(); v != nil {
				c.err = fmt.Errorf("host panic while running the plugin: %v", v)
			}
		}()
		fn := h.mod.ExportedFunction(c.extFn)
		if fn == nil {
			c.err = fmt.Errorf("module exports no function %q", c.extFn)
			return
		}
		c.err = c.ext.Invoke(c.ctx, fn, input)
	}()
	stop()
	c.disarm()
	c.memBytes = memorySize(h.mod)
	h.mu.Lock()
	h.cur = nil
	h.mu.Unlock()
	close(c.done)
	return c
}
