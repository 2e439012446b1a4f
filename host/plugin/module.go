package plugin

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"
)

// module is a plugin's compiled module: compiled already, or to be
// compiled later (a plugin loaded from its cached load facts, facts.go).
// An instance waits for it before instantiating, so the first call of a
// plugin not compiled yet starts its compilation, if nobody has, and waits
// for it within the call's timeout.
type module struct {
	done chan struct{}
	// Set before done is closed.
	cm  wazero.CompiledModule
	err error
	// compile compiles the module and closes done; nil when ready. It
	// runs once (begin).
	compile func()
	once    sync.Once
	// dropped: the plugin was given up (its load failed) before the
	// compilation ended; the compiled module is closed when it does.
	dropped atomic.Bool
}

// readyModule wraps a module compiled already.
func readyModule(cm wazero.CompiledModule) *module {
	m := &module{done: make(chan struct{}), cm: cm}
	close(m.done)
	return m
}

// begin compiles the module unless it is compiled or being compiled; it
// returns when the module is compiled (by this call or another).
func (m *module) begin() {
	if m.compile != nil {
		m.once.Do(m.compile)
	}
}

// wait returns the compiled module, compiling it if nobody has started
// to, or the compile error, or the cause of ctx when it ends first.
func (m *module) wait(ctx context.Context) (wazero.CompiledModule, error) {
	select {
	case <-m.done:
		return m.cm, m.err
	default:
	}
	go m.begin()
	select {
	case <-m.done:
		return m.cm, m.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// drop releases the compiled module now, or when its compilation ends.
func (m *module) drop(ctx context.Context) {
	m.dropped.Store(true)
	select {
	case <-m.done:
		if m.cm != nil {
			m.cm.Close(ctx)
		}
	default:
	}
}

// compileLater returns the module of wasm (checked in full by an earlier
// load with the same bytes and limit: its load facts say so), to be
// compiled by CompileLoaded or by its first call, whichever comes first.
// Runtime.Close does not wait for a compilation under way: the runtime is
// released when the last one ends.
func (r *Runtime) compileLater(ctx context.Context, name string, src *moduleSource, pages uint32, key string) *module {
	m := &module{done: make(chan struct{})}
	log := *zerolog.Ctx(ctx)
	bctx := context.WithoutCancel(ctx)
	m.compile = func() {
		defer close(m.done)
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			m.err = errClosed
			return
		}
		r.compiling++
		r.mu.Unlock()
		var cm wazero.CompiledModule
		wasm, err := src.bytes()
		// This closure stays with the module (module.compile) for the
		// plugin's lifetime, and src with it: the bytes a load read to
		// hash them must not stay too (megabytes for a Go guest).
		src.wasm = nil
		var bin *binary
		if err == nil {
			bin, err = parseBinary(wasm)
		}
		if err == nil {
			cm, err = r.compilePatched(bctx, wasm, bin, pages, src.sum)
		}
		if err != nil {
			// The facts said this module compiles: they are wrong (or the
			// module cache was lost and compiling failed now). Drop them,
			// so the next load checks the module in full before it runs.
			r.dropFacts(key)
			r.forgetSum(src)
			log.Warn().Err(err).Str("plugin", name).Msg("plugin failed to compile; its cached load facts are removed")
		}
		if cm != nil && (r.isClosed() || m.dropped.Load()) {
			cm.Close(bctx)
			cm, err = nil, errClosed
		}
		m.cm, m.err = cm, err
		r.mu.Lock()
		r.compiling--
		release := r.releaseLater && r.compiling == 0
		r.mu.Unlock()
		if release {
			r.release(bctx)
		}
	}
	r.mu.Lock()
	r.pending = append(r.pending, m)
	r.mu.Unlock()
	return m
}

// CompileLoaded compiles, one after the other in the background, the
// modules of plugins loaded from their cached load facts and not compiled
// yet (a call of one compiles its module at once). Front ends call it
// when a run starts, so the compilation overlaps the first model request;
// a run that ends without calling a tool does not wait for it.
func (r *Runtime) CompileLoaded() {
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	go func() {
		for _, m := range pending {
			m.begin()
		}
	}()
}

// exportSig is the signature of an exported function: what loading a
// plugin checks of its exports.
type exportSig struct {
	Params  int `json:"params"`
	Results int `json:"results"`
}

// exportsOf lists a compiled module's exported functions.
func exportsOf(cm wazero.CompiledModule) map[string]exportSig {
	defs := cm.ExportedFunctions()
	out := make(map[string]exportSig, len(defs))
	for n, d := range defs {
		out[n] = exportSig{Params: len(d.ParamTypes()), Results: len(d.ResultTypes())}
	}
	return out
}
