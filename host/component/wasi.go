package component

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/agenthost/agenthost/internal/sandbox"
)

// hostFunc implements an imported function: it receives the lifted
// arguments and returns the result to lower (nil without a result). It
// reports a guest error by trapping and returns WASI errors as values.
type hostFunc func(st *call, args []Value) Value

// hostFuncs are the implemented functions by "interface#function", the
// interface without its version; providedInterfaces the interfaces.
var (
	hostFuncs          = map[string]hostFunc{}
	providedInterfaces = map[string]bool{}
)

func register(iface string, fns map[string]hostFunc) {
	providedInterfaces[iface] = true
	for n, f := range fns {
		hostFuncs[iface+"#"+n] = f
	}
}

// Shorthands for variant values.
func ok(v Value) Var   { return Var{0, v} }
func fail(v Value) Var { return Var{1, v} }
func none() Var        { return Var{0, nil} }
func some(v Value) Var { return Var{1, v} }
func argU64(a Value) uint64 {
	if v, ok := a.(uint64); ok {
		return v
	}
	hostBug("an argument is %T, not u64", a)
	return 0
}

// wasiState is a call's WASI state.
type wasiState struct {
	sb             *Sandbox
	stdin          *bytes.Reader
	stdout, stderr *sandbox.Output
	rand           io.Reader
	// clock is the fake clock without the clock grant, the other
	// plugin kinds' (sandbox.FakeClock).
	clock  sandbox.FakeClock
	start  time.Time
	mu     sync.Mutex
	timers []*time.Timer
	// refused are the HTTP requests the grant refused, the first
	// maxRefusedKept of them; refusedAll counts them all.
	refused    []*sandbox.RefusedError
	refusedAll int
	requests   int
}

func newWasiState(sb *Sandbox) *wasiState {
	w := &wasiState{sb: sb, stdin: bytes.NewReader(sb.Stdin), start: time.Now()}
	max := int64(sb.maxOutput())
	flood := func() { trap("output flood: more than %d bytes written to stdout or stderr", 2*max) }
	w.stdout = sandbox.NewOutput(max, flood)
	w.stderr = sandbox.NewOutput(max, flood)
	w.rand = sandbox.Random(sb.RealRandom)
	return w
}

func (w *wasiState) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.timers {
		t.Stop()
	}
}

func (w *wasiState) flooded() bool { return w.stdout.Flooded() || w.stderr.Flooded() }

// monoNow is the monotonic clock, in nanoseconds.
func (st *call) monoNow() uint64 {
	w := st.wasi
	if st.sb.RealClock {
		return uint64(time.Since(w.start))
	}
	return uint64(w.clock.Nanotime())
}

func (st *call) wallNow() (uint64, uint32) {
	if st.sb.RealClock {
		n := time.Now()
		return uint64(n.Unix()), uint32(n.Nanosecond())
	}
	sec, nsec := st.wasi.clock.Walltime()
	return uint64(sec), uint32(nsec)
}

// maxRandom bounds one request for random bytes.
const maxRandom = 1 << 20

func (st *call) randomBytes(n uint64) []byte {
	if n > maxRandom {
		trap("random bytes: %d bytes asked at once (at most %d)", n, maxRandom)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(st.wasi.rand, b); err != nil {
		panic(err)
	}
	return b
}

func (st *call) randomU64() uint64 {
	b := st.randomBytes(8)
	var v uint64
	for i, c := range b {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// pollable is a wasi:io/poll pollable: ready reports readiness without
// blocking; wait returns a channel closed when it may have become ready
// (nil: ready is final and waiting cannot change it).
type pollable struct {
	ready func() bool
	wait  func() <-chan struct{}
}

var readyPollable = func() bool { return true }

func newReadyPollable() *pollable {
	return &pollable{ready: readyPollable}
}

// block waits until one of ps is ready, or the call's context ends.
func (st *call) block(ps []*pollable) {
	for {
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(st.ctx.Done())}}
		for _, p := range ps {
			if p.ready() {
				return
			}
			if p.wait != nil {
				if ch := p.wait(); ch != nil {
					cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
				}
			}
		}
		if len(cases) == 1 {
			trap("poll: no pollable can ever become ready")
		}
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			panic(st.ctx.Err())
		}
	}
}

// timer makes a pollable ready at the monotonic instant at (ns).
func (st *call) timer(at uint64) *pollable {
	if !st.sb.RealClock {
		return newReadyPollable()
	}
	now := st.monoNow()
	if at <= now {
		return newReadyPollable()
	}
	ch := make(chan struct{})
	t := time.AfterFunc(time.Duration(at-now), func() { close(ch) })
	st.wasi.mu.Lock()
	st.wasi.timers = append(st.wasi.timers, t)
	st.wasi.mu.Unlock()
	return &pollable{
		ready: func() bool {
			select {
			case <-ch:
				return true
			default:
				return false
			}
		},
		wait: func() <-chan struct{} { return ch },
	}
}

// ioError is a wasi:io/error error.
type ioError struct {
	msg    string
	fsCode int  // a wasi:filesystem error-code, or -1
	http   *Var // a wasi:http error-code, or nil
}

func streamClosed() Var           { return fail(Var{1, nil}) }
func streamFailed(msg string) Var { return fail(Var{0, &ioError{msg: msg, fsCode: -1}}) }

// inputStream and outputStream are the host's streams.
type inputStream interface {
	// read returns up to n bytes; with block it waits for at least one
	// byte or the end. It returns (nil, closed) at the end.
	read(st *call, n uint64, block bool) ([]byte, Var, bool)
	pollable() *pollable
}

type outputStream interface {
	checkWrite(st *call) (uint64, *Var)
	write(st *call, b []byte) *Var
	pollable() *pollable
}

// maxIO bounds one read or write of a stream.
const maxIO = 1 << 20

// stdoutStream writes to a sandbox.Output.
type stdoutStream struct{ c *sandbox.Output }

func (s *stdoutStream) checkWrite(*call) (uint64, *Var) { return maxIO, nil }
func (s *stdoutStream) write(_ *call, b []byte) *Var    { s.c.Write(b); return nil }
func (s *stdoutStream) pollable() *pollable             { return newReadyPollable() }

type stdinStream struct{ r *bytes.Reader }

func (s *stdinStream) read(_ *call, n uint64, _ bool) ([]byte, Var, bool) {
	if s.r.Len() == 0 {
		return nil, streamClosed(), false
	}
	b := make([]byte, min(n, maxIO, uint64(s.r.Len())))
	k, _ := s.r.Read(b)
	return b[:k], Var{}, true
}
func (s *stdinStream) pollable() *pollable { return newReadyPollable() }

func inputOf(a Value) inputStream {
	s, ok := a.(inputStream)
	if !ok {
		hostBug("input stream is %T", a)
	}
	return s
}

func outputOf(a Value) outputStream {
	s, ok := a.(outputStream)
	if !ok {
		hostBug("output stream is %T", a)
	}
	return s
}

func init() {
	register("wasi:cli/environment", map[string]hostFunc{
		"get-environment": func(st *call, _ []Value) Value {
			out := []Value{}
			for _, kv := range st.sb.Env {
				k, v, _ := strings.Cut(kv, "=")
				out = append(out, []Value{k, v})
			}
			return out
		},
		"get-arguments": func(st *call, _ []Value) Value {
			out := []Value{}
			for _, a := range st.sb.Args {
				out = append(out, a)
			}
			return out
		},
		"initial-cwd": func(*call, []Value) Value { return none() },
	})
	register("wasi:cli/exit", map[string]hostFunc{
		"exit": func(_ *call, args []Value) Value {
			code := uint32(0)
			if args[0].(Var).Case != 0 {
				code = 1
			}
			panic(sys.NewExitError(code))
		},
		"exit-with-code": func(_ *call, args []Value) Value {
			panic(sys.NewExitError(uint32(argU64(args[0]))))
		},
	})
	register("wasi:cli/stdin", map[string]hostFunc{
		"get-stdin": func(st *call, _ []Value) Value { return &stdinStream{st.wasi.stdin} },
	})
	register("wasi:cli/stdout", map[string]hostFunc{
		"get-stdout": func(st *call, _ []Value) Value { return &stdoutStream{st.wasi.stdout} },
	})
	register("wasi:cli/stderr", map[string]hostFunc{
		"get-stderr": func(st *call, _ []Value) Value { return &stdoutStream{st.wasi.stderr} },
	})
	noTerminal := func(*call, []Value) Value { return none() }
	register("wasi:cli/terminal-input", nil)
	register("wasi:cli/terminal-output", nil)
	register("wasi:cli/terminal-stdin", map[string]hostFunc{"get-terminal-stdin": noTerminal})
	register("wasi:cli/terminal-stdout", map[string]hostFunc{"get-terminal-stdout": noTerminal})
	register("wasi:cli/terminal-stderr", map[string]hostFunc{"get-terminal-stderr": noTerminal})

	register("wasi:io/error", map[string]hostFunc{
		"[method]error.to-debug-string": func(_ *call, args []Value) Value {
			if e, ok := args[0].(*ioError); ok {
				return e.msg
			}
			return "error"
		},
	})
	register("wasi:io/poll", map[string]hostFunc{
		"[method]pollable.ready": func(_ *call, args []Value) Value { return args[0].(*pollable).ready() },
		"[method]pollable.block": func(st *call, args []Value) Value {
			st.block([]*pollable{args[0].(*pollable)})
			return nil
		},
		"poll": func(st *call, args []Value) Value {
			in := args[0].([]Value)
			if len(in) == 0 {
				trap("poll: the list of pollables is empty")
			}
			ps := make([]*pollable, len(in))
			for i, v := range in {
				ps[i] = v.(*pollable)
			}
			st.block(ps)
			out := []Value{}
			for i, p := range ps {
				if p.ready() {
					out = append(out, uint64(i))
				}
			}
			return out
		},
	})
	readFn := func(block bool) hostFunc {
		return func(st *call, args []Value) Value {
			b, e, good := inputOf(args[0]).read(st, argU64(args[1]), block)
			if !good {
				return e
			}
			return ok(b)
		}
	}
	skipFn := func(block bool) hostFunc {
		return func(st *call, args []Value) Value {
			b, e, good := inputOf(args[0]).read(st, argU64(args[1]), block)
			if !good {
				return e
			}
			return ok(uint64(len(b)))
		}
	}
	writeFn := func(st *call, args []Value) Value {
		s := outputOf(args[0])
		b := args[1].([]byte)
		if room, e := s.checkWrite(st); e != nil {
			return *e
		} else if uint64(len(b)) > room {
			trap("output-stream.write: %d bytes written where check-write allowed %d", len(b), room)
		}
		if e := s.write(st, b); e != nil {
			return *e
		}
		return ok(nil)
	}
	blockingWrite := func(st *call, args []Value) Value {
		s := outputOf(args[0])
		b := args[1].([]byte)
		if len(b) > 4096 {
			trap("output-stream.blocking-write-and-flush: %d bytes at once (at most 4096)", len(b))
		}
		if _, e := s.checkWrite(st); e != nil {
			return *e
		}
		if e := s.write(st, b); e != nil {
			return *e
		}
		return ok(nil)
	}
	flushFn := func(st *call, args []Value) Value {
		if _, e := outputOf(args[0]).checkWrite(st); e != nil {
			return *e
		}
		return ok(nil)
	}
	zeroes := func(st *call, args []Value) Value {
		n := argU64(args[1])
		if n > maxIO {
			trap("output-stream.write-zeroes: %d bytes at once", n)
		}
		return writeFn(st, []Value{args[0], make([]byte, n)})
	}
	splice := func(block bool) hostFunc {
		return func(st *call, args []Value) Value {
			out := outputOf(args[0])
			room, e := out.checkWrite(st)
			if e != nil {
				return *e
			}
			b, e2, good := inputOf(args[1]).read(st, min(argU64(args[2]), room), block)
			if !good {
				return e2
			}
			if e := out.write(st, b); e != nil {
				return *e
			}
			return ok(uint64(len(b)))
		}
	}
	register("wasi:io/streams", map[string]hostFunc{
		"[method]input-stream.read":          readFn(false),
		"[method]input-stream.blocking-read": readFn(true),
		"[method]input-stream.skip":          skipFn(false),
		"[method]input-stream.blocking-skip": skipFn(true),
		"[method]input-stream.subscribe": func(_ *call, args []Value) Value {
			return inputOf(args[0]).pollable()
		},
		"[method]output-stream.check-write": func(st *call, args []Value) Value {
			n, e := outputOf(args[0]).checkWrite(st)
			if e != nil {
				return *e
			}
			return ok(n)
		},
		"[method]output-stream.write":                           writeFn,
		"[method]output-stream.blocking-write-and-flush":        blockingWrite,
		"[method]output-stream.flush":                           flushFn,
		"[method]output-stream.blocking-flush":                  flushFn,
		"[method]output-stream.write-zeroes":                    zeroes,
		"[method]output-stream.blocking-write-zeroes-and-flush": zeroes,
		"[method]output-stream.splice":                          splice(false),
		"[method]output-stream.blocking-splice":                 splice(true),
		"[method]output-stream.subscribe": func(_ *call, args []Value) Value {
			return outputOf(args[0]).pollable()
		},
	})

	register("wasi:clocks/monotonic-clock", map[string]hostFunc{
		"now":        func(st *call, _ []Value) Value { return st.monoNow() },
		"resolution": func(*call, []Value) Value { return uint64(1) },
		"subscribe-instant": func(st *call, args []Value) Value {
			return st.timer(argU64(args[0]))
		},
		"subscribe-duration": func(st *call, args []Value) Value {
			d := argU64(args[0])
			if !st.sb.RealClock {
				return newReadyPollable()
			}
			now := st.monoNow()
			return st.timer(now + min(d, 1<<62))
		},
	})
	register("wasi:clocks/wall-clock", map[string]hostFunc{
		"now": func(st *call, _ []Value) Value {
			s, ns := st.wallNow()
			return []Value{s, uint64(ns)}
		},
		"resolution": func(*call, []Value) Value { return []Value{uint64(0), uint64(1)} },
	})
	register("wasi:random/random", map[string]hostFunc{
		"get-random-bytes": func(st *call, args []Value) Value { return st.randomBytes(argU64(args[0])) },
		"get-random-u64":   func(st *call, _ []Value) Value { return st.randomU64() },
	})
	register("wasi:random/insecure", map[string]hostFunc{
		"get-insecure-random-bytes": func(st *call, args []Value) Value { return st.randomBytes(argU64(args[0])) },
		"get-insecure-random-u64":   func(st *call, _ []Value) Value { return st.randomU64() },
	})
	register("wasi:random/insecure-seed", map[string]hostFunc{
		"insecure-seed": func(st *call, _ []Value) Value { return []Value{st.randomU64(), st.randomU64()} },
	})
	configGet := func(st *call, args []Value) Value {
		v, found := st.sb.Config[args[0].(string)]
		if !found {
			return ok(none())
		}
		return ok(some(v))
	}
	configAll := func(st *call, _ []Value) Value {
		out := []Value{}
		for _, k := range sortedKeys(st.sb.Config) {
			out = append(out, []Value{k, st.sb.Config[k]})
		}
		return ok(out)
	}
	register("wasi:config/store", map[string]hostFunc{"get": configGet, "get-all": configAll})
	// wasi:config's earlier name, used by 0.2.0-draft components.
	register("wasi:config/runtime", map[string]hostFunc{"get": configGet, "get-all": configAll})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
