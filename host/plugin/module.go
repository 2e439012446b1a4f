package plugin

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
)

// module is a plugin's compiled module: compiled already, or to be
// compiled later (a plugin loaded from its cached load facts,
// internal/loadcache).
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

// exportSig is the signature of an exported function: what loading a
// plugin checks of its exports (kept in its load facts).
type exportSig = loadcache.Export

// exportsOf lists a compiled module's exported functions.
func exportsOf(cm wazero.CompiledModule) map[string]exportSig {
	defs := cm.ExportedFunctions()
	out := make(map[string]exportSig, len(defs))
	for n, d := range defs {
		out[n] = exportSig{Params: len(d.ParamTypes()), Results: len(d.ResultTypes())}
	}
	return out
}
