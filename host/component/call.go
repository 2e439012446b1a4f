package component

import (
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"runtime"
	"strconv"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/agenthost/agenthost/internal/hostmem"
)

// Outcome is what a call that ran to its end returns.
type Outcome struct {
	// JSON is the function's result as Wassette's component2json shows
	// it: {"result": value}, or null for a function without a result.
	JSON []byte
	// IsError is set when the function returned result::err: a tool
	// error, shown to the model.
	IsError bool
	// Stdout and Stderr are what the guest wrote, each cut at
	// Sandbox.MaxOutput bytes (Truncated says whether it was).
	Stdout, Stderr []byte
	Truncated      bool
	// For a command's run (Sandbox.Command): ExitCode is the code it
	// exited with (wasi:cli/exit's, else 0 when run returned ok and 1
	// when it returned err), and StdoutText and StderrText are what it
	// wrote as text, each with a marker where output was dropped.
	ExitCode               uint32
	StdoutText, StderrText string
	// HTTPRefused are the HTTP requests the grant refused (the first
	// maxRefusedKept; HTTPRefusedAll counts them all), each naming its
	// URL (redacted) and the origin to allow: a component may swallow
	// the error it got, and the person needs to know what to grant.
	HTTPRefused    []*sandbox.RefusedError
	HTTPRefusedAll int
}

// ErrHostBudget is wrapped by the Err of a sandbox.FailureMemory whose call would
// have made the host hold more than Component.HostBudget bytes for it;
// errors.Is(err, hostmem.ErrExceeded) holds too.
var ErrHostBudget = errors.New("the call moved more between the component and the host than its memory limit allows")

// ErrUnknownTool is returned by Call for a tool the component does not
// export.
var ErrUnknownTool = errors.New("unknown tool")

// ArgumentError is returned by Call when the arguments do not fit the
// function's parameters; the guest is not run.
type ArgumentError struct{ Err error }

func (e *ArgumentError) Error() string { return "invalid arguments: " + e.Err.Error() }
func (e *ArgumentError) Unwrap() error { return e.Err }

type callKey struct{}

// call is the state of one call: its instances, handles and sandbox.
type call struct {
	k    *Component
	ctx  context.Context
	sb   *Sandbox
	mods []api.Module
	host api.Module
	mems map[int]api.Memory
	fns  map[int]api.Function
	wasi *wasiState
	// handles is the component instance's handle table.
	handles handleTable
	// budget bounds what the host holds for the call (hostmem): every
	// value lifted from the guest's memory, lowered into it or kept for
	// it, charged as the copy is made. Its limit is the component's
	// memory limit.
	budget *hostmem.Budget
}

func callFrom(ctx context.Context) *call {
	st, _ := ctx.Value(callKey{}).(*call)
	if st == nil {
		hostBug("a host function ran outside a call")
	}
	return st
}

// Call runs the exported function named tool (a Func's Name) with JSON
// arguments, in fresh instances of the component's core modules with the
// sandbox's grants. A function that returns result::err gives an Outcome
// with IsError. A call that does not run to its end returns a *sandbox.Failure;
// arguments that do not fit return an *ArgumentError. The context bounds
// the call: the runtime must close modules when their context is done
// (wazero's WithCloseOnContextDone) for a deadline to stop a spinning
// guest.
func (k *Component) Call(ctx context.Context, tool string, args []byte, sb *Sandbox) (*Outcome, error) {
	f := k.Func(tool)
	if f == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, tool)
	}
	vals, err := decodeArgs(f.Type, args)
	if err != nil {
		return nil, &ArgumentError{err}
	}
	if sb == nil {
		sb = &Sandbox{}
	}
	st := &call{k: k, sb: sb, mems: map[int]api.Memory{}, fns: map[int]api.Function{}, budget: hostmem.New(k.HostBudget())}
	st.wasi = newWasiState(sb)
	defer st.close()
	// Whatever the call started (an HTTP request the guest did not wait
	// for) ends with it.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.ctx = context.WithValue(cctx, callKey{}, st)
	res, err := st.run(f, vals)
	out := st.wasi.stdout
	errOut := st.wasi.stderr
	var exit *sys.ExitError
	if sb.Command && errors.As(err, &exit) && ctx.Err() == nil && !st.wasi.flooded() {
		res, err = &Outcome{ExitCode: exit.ExitCode()}, nil
	} else if sb.Command && err == nil && res.IsError {
		res.ExitCode = 1
	}
	if err == nil && st.quotaHit() {
		err = errors.New("the component exceeded its write quota")
	}
	if err == nil {
		// Refused in the background (an HTTP response body) and answered
		// to the guest as an error: the call still fails.
		err = st.budget.Refused()
	}
	if err != nil {
		return nil, st.classify(ctx, err, errOut.Head())
	}
	res.Stdout, res.Stderr = out.Head(), errOut.Head()
	res.Truncated = out.Truncated() || errOut.Truncated()
	if sb.Command {
		res.StdoutText, res.StderrText = out.Text(), errOut.Text()
	}
	res.HTTPRefused, res.HTTPRefusedAll = st.wasi.refused, st.wasi.refusedAll
	return res, nil
}

func (st *call) close() {
	st.handles.closeAll()
	for i := len(st.mods) - 1; i >= 0; i-- {
		if st.mods[i] != nil {
			st.mods[i].Close(context.Background())
		}
	}
	if st.host != nil {
		st.host.Close(context.Background())
	}
	st.wasi.close()
}

// run instantiates the component and calls f, turning the panics of the
// host side of the ABI into errors.
func (st *call) run(f *Func, vals []Value) (res *Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case *Trap:
				err = e
			case *hostError:
				err = e
			case error:
				err = e
			default:
				panic(r)
			}
		}
	}()
	if err := st.instantiate(); err != nil {
		return nil, err
	}
	fn := f.fn
	core := st.coreFunc(fn.core)
	a := st.abiFor(fn.opts, "the arguments of "+f.Name)
	ft := fn.ft
	var flat []uint64
	if _, spilled := flattenParams(ft); spilled {
		tt := paramsTuple(ft)
		p := a.alloc(tt.align, tt.size)
		a.store(p, tt, vals)
		flat = []uint64{uint64(p)}
	} else {
		for i, p := range ft.Params {
			flat = a.lowerFlat(flat, p.Type, vals[i])
		}
	}
	a.release() // the arguments are in the guest's memory now
	a.what = "the result of " + f.Name
	out, err := core.Call(st.ctx, flat...)
	if err != nil {
		return nil, err
	}
	res = &Outcome{JSON: []byte("null")}
	if ft.Result != nil {
		var v Value
		if _, spilled := flattenResults(ft); spilled {
			if len(out) != 1 {
				trap("the core function returned %d values, not a pointer", len(out))
			}
			p := uint32(out[0])
			checkPtr(a, p, ft.Result.align, ft.Result.size)
			v = a.load(p, ft.Result)
		} else {
			v = a.liftFlat(out, ft.Result)
		}
		b, err := encodeResult(ft.Result, v, st.sb.maxResult())
		if err != nil {
			return nil, err
		}
		res.JSON = b
		if ft.Result.Kind == Result && v.(Var).Case == 1 {
			res.IsError = true
		}
	}
	if fn.opts.postReturn >= 0 {
		if _, err := st.coreFunc(fn.opts.postReturn).Call(st.ctx, out...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

var errInstantiate = errors.New("instantiating the component")

func (st *call) instantiate() error {
	k := st.k
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	host, err := k.rt.InstantiateModule(st.ctx, k.host, cfg)
	if err != nil {
		return fmt.Errorf("%w: host functions: %v", errInstantiate, err)
	}
	st.host = host
	for i, ci := range k.c.coreInsts {
		var resolve experimental.ImportResolver
		var cm wazero.CompiledModule
		if ci.module >= 0 {
			cm = k.compiled[ci.module]
			args := map[string]api.Module{}
			for _, a := range ci.args {
				name := a.name
				if name == "" {
					name = k.mods[ci.module].emptyName
				}
				args[name] = st.mods[a.inst]
			}
			resolve = func(name string) api.Module { return args[name] }
		} else {
			cm = k.bundles[i]
			resolve = func(name string) api.Module {
				if name == "host" {
					return host
				}
				if j, err := strconv.Atoi(name[1:]); err == nil && j < len(st.mods) {
					return st.mods[j]
				}
				return nil
			}
		}
		m, err := k.rt.InstantiateModule(experimental.WithImportResolver(st.ctx, resolve), cm, cfg)
		if err != nil {
			var exit *sys.ExitError
			if errors.As(err, &exit) {
				return err
			}
			return fmt.Errorf("%w: core instance %d: %w", errInstantiate, i, err)
		}
		st.mods = append(st.mods, m)
	}
	return nil
}

// memory resolves core memory i in this call's instances.
func (st *call) memory(i int) api.Memory {
	if i < 0 {
		return nil
	}
	if m, ok := st.mems[i]; ok {
		return m
	}
	ref := st.k.c.coreMems[i]
	if ref.inst >= len(st.mods) {
		trap("memory %d is used before its instance exists", i)
	}
	m := st.mods[ref.inst].ExportedMemory(ref.name)
	if m == nil {
		trap("core instance %d exports no memory %q", ref.inst, ref.name)
	}
	st.mems[i] = m
	return m
}

// coreFunc resolves core function i, an export of a core instance.
func (st *call) coreFunc(i int) api.Function {
	if f, ok := st.fns[i]; ok {
		return f
	}
	cf := st.k.c.coreFuncs[i]
	if cf.kind != cfExport {
		trap("core function %d is not an export of a core instance", i)
	}
	if cf.ref.inst >= len(st.mods) {
		trap("function %d is used before its instance exists", i)
	}
	f := st.mods[cf.ref.inst].ExportedFunction(cf.ref.name)
	if f == nil {
		trap("core instance %d exports no function %q", cf.ref.inst, cf.ref.name)
	}
	st.fns[i] = f
	return f
}

func (st *call) abiFor(o canonOpts, what string) *abi {
	a := &abi{ctx: st.ctx, st: st, mem: st.memory(o.memory), enc: o.enc, what: what}
	if o.realloc >= 0 {
		a.realloc = st.coreFunc(o.realloc)
	}
	return a
}

// invokeHost runs a lowered import for the guest.
func (st *call) invokeHost(lw *lowering, stack []uint64) {
	if lw.drop != nil {
		st.handles.drop(uint32(stack[0]), lw.drop)
		return
	}
	if lw.impl == nil {
		trap("the component called %s, which agenthost does not provide", lw.label)
	}
	if err := st.ctx.Err(); err != nil {
		panic(err)
	}
	a := st.abiFor(lw.opts, "the arguments of "+lw.label)
	// The host lets go of the arguments and of the result it lowered
	// when the import returns; what an import keeps it charges itself
	// (call.hold).
	defer a.release()
	ft := lw.fn.ft
	params, spilled := flattenParams(ft)
	var args []Value
	if spilled {
		tt := paramsTuple(ft)
		p := uint32(stack[0])
		checkPtr(a, p, tt.align, tt.size)
		args = a.load(p, tt).([]Value)
	} else {
		i := 0
		for _, p := range ft.Params {
			args = append(args, a.liftFlat(stack[i:], p.Type))
			i += len(p.Type.flat)
		}
	}
	res := st.runImpl(lw, args)
	a.what = "the result of " + lw.label
	if ft.Result == nil {
		return
	}
	if _, rs := flattenResults(ft); rs {
		p := uint32(stack[len(params)])
		checkPtr(a, p, ft.Result.align, ft.Result.size)
		a.store(p, ft.Result, res)
		return
	}
	out := a.lowerFlat(nil, ft.Result, res)
	stack[0] = out[0]
}

// runImpl runs a host function. The host implements WASI's signatures; a
// component that declares an import with another signature makes the
// implementation see values of other types, which ends the call with a
// trap naming the import rather than with a Go panic's message.
func (st *call) runImpl(lw *lowering, args []Value) (res Value) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		var rt runtime.Error
		if he, ok := r.(*hostError); ok || (func() bool { e, isErr := r.(error); return isErr && errors.As(e, &rt) })() {
			detail := fmt.Sprint(r)
			if ok {
				detail = he.msg
			}
			panic(&Trap{fmt.Sprintf("the component imports %s as %s, which is not the signature agenthost implements (%s)", lw.label, lw.fn.ft, detail)})
		}
		panic(r)
	}()
	return lw.impl(st, args)
}

// classify turns the error of a call into a *sandbox.Failure.
func (st *call) classify(ctx context.Context, err error, stderr []byte) error {
	f := &sandbox.Failure{Kind: sandbox.FailureTrap, Err: err, Stderr: string(stderr)}
	var tr *Trap
	if errors.As(err, &tr) {
		f.Err = tr // without wazero's wrapping and stack trace
	}
	var exit *sys.ExitError
	var hostErr *hostError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		f.Kind, f.Err = sandbox.FailureTimeout, fmt.Errorf("the call ran past its deadline: %w", context.DeadlineExceeded)
	case ctx.Err() != nil:
		f.Kind, f.Err = sandbox.FailureCanceled, fmt.Errorf("the call was cancelled: %w", ctx.Err())
	case st.wasi.flooded():
		f.Kind, f.Err = sandbox.FailureOutput, fmt.Errorf("the component wrote more than %d bytes to stdout or stderr", 2*st.sb.maxOutput())
	case st.quotaHit():
		f.Kind = sandbox.FailureQuota
		b, e := st.sb.Quota.Exceeded()
		switch {
		case b:
			f.Err = fmt.Errorf("the component wrote more than its write quota allows: %w", err)
		case e:
			f.Err = fmt.Errorf("the component created more files than its quota allows: %w", err)
		}
	case errors.Is(err, errResultTooLarge):
		f.Kind = sandbox.FailureResult
	case errors.Is(err, hostmem.ErrExceeded):
		var he *hostmem.Error
		errors.As(err, &he)
		f.Kind = sandbox.FailureMemory
		f.Err = fmt.Errorf("%w: %w", ErrHostBudget, he)
	case errors.As(err, &exit):
		f.Kind, f.ExitCode = sandbox.FailureExit, exit.ExitCode()
		f.Err = fmt.Errorf("the component exited with code %d", exit.ExitCode())
	case errors.As(err, &hostErr):
		f.Kind = sandbox.FailureTrap
	case errors.Is(err, errInstantiate):
		f.Kind = sandbox.FailureStart
	}
	if f.Kind == sandbox.FailureTrap && st.memoryFull() {
		f.Kind = sandbox.FailureMemory
		f.Err = fmt.Errorf("failed with its memory at the limit of %d pages (%d MiB): %w", st.k.memLimit, st.k.memLimit/16, err)
	}
	return f
}

// hold charges the call's budget for n bytes the host keeps for the
// guest beyond the host call that made them (header fields, a request's
// path, a body); past the budget the call fails.
func (st *call) hold(n uint64, what string) {
	if err := st.budget.Charge(n, what); err != nil {
		panic(err)
	}
}

// memoryFull reports whether a memory of the call is at (or within an
// eighth of) the limit.
func (st *call) memoryFull() bool {
	limit := uint64(st.k.memLimit) * 65536
	for _, m := range st.mods {
		// Module.Memory is a typed nil for a module without memory;
		// exported memories are looked up by name instead.
		for name := range m.ExportedMemoryDefinitions() {
			if mem := m.ExportedMemory(name); mem != nil && uint64(mem.Size())+limit/8 >= limit {
				return true
			}
		}
	}
	return false
}

func (st *call) quotaHit() bool {
	if st.sb.Quota == nil {
		return false
	}
	b, e := st.sb.Quota.Exceeded()
	return b || e
}
