package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/sandbox"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/host/plugin/internal/guestmem"
	"github.com/agenthost/agenthost/host/plugin/internal/notify"
	"github.com/agenthost/agenthost/internal/rootfs"
)

// Causes of an instance's context being cancelled by the host.
var (
	errTimeout      = errors.New("call timeout")
	errStartTimeout = errors.New("pre-start timeout")
	errFlood        = errors.New("output flood")
	errClosed       = errors.New("runtime closed")
	errRetired      = errors.New("instance retired")
	errFraming      = errors.New("output outside an answer line")
)

// instance is one module instance serving one call (or one describe run).
type instance struct {
	r      *Runtime
	mod    *module
	mem    *guestmem.Allocator // the guest memories of the running module (internal/guestmem)
	cfg    wazero.ModuleConfig
	limits Limits
	clock  bool // real sleeping (the clock grant)
	random bool // crypto randomness already set in cfg
	// mounts are the plugin's mounts; quota counts what this instance
	// writes through them (nil without a rw mount).
	mounts []mountPoint
	quota  *rootfs.Quota

	ctx    context.Context
	cancel context.CancelCauseFunc
	stdin  io.Reader
	// pipeR/pipeW carry the request of a pre-started instance.
	pipeR          *io.PipeReader
	pipeW          *io.PipeWriter
	stdout, stderr *sandbox.Output
	// notes routes the notification lines of an agenthost/1 plugin's
	// stderr (notes.go); nil for other plugins.
	notes *notify.Sink

	mu      sync.Mutex
	timer   *time.Timer
	serving bool

	// ready is closed when a pre-started guest first reads stdin.
	ready chan struct{}
	done  chan struct{}
	// reuse: the instance serves many calls, one request line each (see
	// reuse.go); stdout and stderr are then swapped per call under mu.
	reuse bool
	// frame is set while a reused instance serves a call and closed when
	// the guest has written the line that ends its answer.
	frame chan struct{}
	// calls counts the calls a reused instance has served.
	calls int

	// Set before done is closed.
	err          error
	instantiated bool
	memBytes     uint64

	// ext is the Extism state of an instance of an Extism plugin, which
	// calls the export extFn instead of running _start (kind_extism.go).
	ext   *extism.Call
	extFn string
	// held is set on the instances of a reused Extism plugin (the one it
	// started as and each call's): extism_reuse.go.
	held *extismHeld
}

func newInstance(parent context.Context, r *Runtime, mod *module, cfg wazero.ModuleConfig, limits Limits, g Grants, mounts []mountPoint) *instance {
	ctx, cancel := context.WithCancelCause(parent)
	i := &instance{
		r: r, mod: mod, cfg: cfg, limits: limits, clock: g.Clock, random: g.Random,
		mounts: mounts,
		ctx:    ctx, cancel: cancel,
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, m := range mounts {
		if !m.fs.ReadOnly() {
			i.quota = rootfs.NewQuota(limits.MaxWrite, limits.MaxFiles)
			break
		}
	}
	i.stdout = sandbox.NewOutput(limits.MaxOutput, i.flood)
	i.stderr = sandbox.NewOutput(limits.MaxOutput, i.flood)
	return i
}

func (i *instance) flood() { i.cancel(errFlood) }

// withPipe makes the instance read its stdin from a pipe fed by serve; the
// first read stops the pre-start watchdog.
func (i *instance) withPipe() *instance {
	i.pipeR, i.pipeW = io.Pipe()
	i.stdin = &notifyReader{r: i.pipeR, first: i.waiting}
	context.AfterFunc(i.ctx, func() { i.pipeR.CloseWithError(context.Cause(i.ctx)) })
	return i
}

// waiting is called when a pre-started guest first reads stdin: it is
// initialised and waiting for its call, so the watchdog can stop.
func (i *instance) waiting() {
	close(i.ready)
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.serving && i.timer != nil {
		i.timer.Stop()
	}
}

// arm (re)starts the deadline of the instance.
func (i *instance) arm(d time.Duration, cause error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.timer != nil {
		i.timer.Stop()
	}
	i.timer = time.AfterFunc(d, func() { i.cancel(cause) })
}

func (i *instance) disarm() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.timer != nil {
		i.timer.Stop()
	}
}

// run instantiates the module and runs _start to completion. done is
// closed before the module is released, so the caller does not wait for it.
func (i *instance) run() {
	mod := i.exec()
	close(i.done)
	if i.pipeR != nil {
		i.pipeR.CloseWithError(io.ErrClosedPipe)
	}
	if mod != nil {
		mod.Close(context.WithoutCancel(i.ctx))
	}
	i.mem.Release() // the guest has stopped: its memory can go
}

func (i *instance) exec() (mod api.Module) {
	defer func() {
		// wazero turns guest misbehaviour into errors; this guards the host
		// against a bug in that machinery all the same.
		if v := recover(); v != nil {
			i.err = fmt.Errorf("host panic while running the plugin: %v", v)
		}
	}()
	var cfg wazero.ModuleConfig
	switch {
	case i.held != nil:
		cfg = i.cfg.WithStdout(heldOutput{h: i.held}).WithStderr(heldOutput{h: i.held, stderr: true})
	case i.reuse:
		cfg = i.cfg.WithStdout(reuseStdout{i}).WithStderr(reuseStderr{i})
	default:
		cfg = i.cfg.WithStdout(i.stdout).WithStderr(i.stderr)
	}
	if i.stdin != nil && i.ext == nil {
		cfg = cfg.WithStdin(i.stdin)
	}
	if !i.random {
		cfg = cfg.WithRandSource(sandbox.Random(false))
	}
	if i.clock {
		cfg = cfg.WithNanosleep(i.sleep)
	} else {
		c := new(sandbox.FakeClock)
		cfg = cfg.WithWalltime(c.Walltime, sys.ClockResolution(time.Microsecond)).WithNanotime(c.Nanotime, sys.ClockResolution(time.Nanosecond))
	}
	if len(i.mounts) > 0 {
		cfg = cfg.WithFSConfig(i.fsConfig())
	}
	if i.ext != nil {
		return i.execExtism(cfg)
	}
	if mod, _ = i.newModule(cfg); mod == nil {
		return nil
	}
	start := mod.ExportedFunction("_start")
	if start == nil {
		i.err = errors.New("module exports no _start function")
		return mod
	}
	_, i.err = start.Call(i.ctx)
	i.memBytes = memorySize(mod)
	return mod
}

// memorySize is the size of mod's exported memory, 0 when it exports none
// (a WASI module exports its memory: the host functions read it).
func memorySize(mod api.Module) uint64 {
	for name := range mod.ExportedMemoryDefinitions() {
		if m := mod.ExportedMemory(name); m != nil {
			return uint64(m.Size())
		}
	}
	return 0
}

// fsConfig mounts the plugin's mounts, the read-write ones through views
// that charge the instance's quota: the FS is shared by concurrent
// instances, the quota is per call.
func (i *instance) fsConfig() wazero.FSConfig {
	fsc := wazero.NewFSConfig()
	for _, m := range i.mounts {
		fs := m.fs
		if !fs.ReadOnly() {
			fs = fs.WithQuota(i.quota)
		}
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(fs, m.guest)
	}
	return fsc
}

// quotaFailure reports a quota the instance ran into, or nil.
func (i *instance) quotaFailure() *sandbox.Failure {
	bytes, entries := i.quota.Exceeded()
	if !bytes && !entries {
		return nil
	}
	var what []string
	if bytes {
		what = append(what, fmt.Sprintf("wrote more than max_write (%s)", bytesize.Exact(uint64(i.limits.MaxWrite))))
	}
	if entries {
		what = append(what, fmt.Sprintf("created more than max_files (%d) files, directories and links", i.limits.MaxFiles))
	}
	return &sandbox.Failure{Kind: sandbox.FailureQuota, Stderr: i.stderr.Summary(),
		Err: fmt.Errorf("the call %s in its mounts; the excess was refused (raise limits in the plugin block if this is expected)", strings.Join(what, " and "))}
}

// sleep is the guest's nanosleep when the real clock is granted: it sleeps
// for real but wakes when the instance is cancelled.
func (i *instance) sleep(ns int64) {
	done := i.ctx.Done()
	if i.held != nil {
		if c := i.held.current(); c != nil {
			done = c.ctx.Done() // a reused instance sleeps in its current call
		}
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// notifyReader calls first before the first Read.
type notifyReader struct {
	r     io.Reader
	once  sync.Once
	first func()
}

func (n *notifyReader) Read(p []byte) (int, error) {
	n.once.Do(n.first)
	return n.r.Read(p)
}

// serve hands the request to the instance (already started or not) and
// waits for it to end, honouring the call's context and timeout.
func (i *instance) serve(ctx context.Context, stdin []byte, timeout time.Duration) {
	i.mu.Lock()
	i.serving = true
	i.mu.Unlock()
	i.arm(timeout, errTimeout)
	stop := context.AfterFunc(ctx, func() { i.cancel(context.Cause(ctx)) })
	defer stop()
	go func() {
		// Ends when the guest has read everything or the pipe is closed.
		_, _ = i.pipeW.Write(stdin)
		_ = i.pipeW.Close()
	}()
	<-i.done
	i.disarm()
}

// runCold runs a fresh instance synchronously with stdin.
func (i *instance) runCold(ctx context.Context, stdin []byte, timeout time.Duration) {
	i.stdin = bytes.NewReader(stdin)
	i.serving = true
	i.arm(timeout, errTimeout)
	i.run()
	i.disarm()
}

// exitCode classifies how the instance ended: the guest's exit code, or a
// *sandbox.Failure. callCtx is the context of the call the instance served. With
// anyCode (wasi_cli), every exit code is the guest's answer; otherwise only
// 0 and 1 are.
func (i *instance) exitCode(callCtx context.Context, anyCode bool) (uint32, *sandbox.Failure) {
	fail := func(kind sandbox.FailureKind, code uint32, err error) *sandbox.Failure {
		return &sandbox.Failure{Kind: kind, ExitCode: code, Stderr: i.stderr.Summary(), Err: err}
	}
	if i.err == nil {
		return 0, nil
	}
	if !i.instantiated {
		if f := i.causeFailure(callCtx, fail); f != nil {
			return 0, f
		}
		return 0, fail(sandbox.FailureStart, 0, fmt.Errorf("instantiate: %w", i.err))
	}
	var ee *sys.ExitError
	if errors.As(i.err, &ee) {
		code := ee.ExitCode()
		switch code {
		case sys.ExitCodeContextCanceled, sys.ExitCodeDeadlineExceeded:
			if f := i.causeFailure(callCtx, fail); f != nil {
				return 0, f
			}
			return 0, fail(sandbox.FailureCanceled, 0, i.err)
		case 0, 1:
			return code, nil
		}
		if i.nearMemoryLimit() {
			return 0, fail(sandbox.FailureMemory, code, fmt.Errorf("exit code %d with memory at its limit of %s", code, bytesize.Exact(i.limits.Memory)))
		}
		if anyCode {
			return code, nil
		}
		return 0, fail(sandbox.FailureExit, code, fmt.Errorf("exit code %d", code))
	}
	if f := i.causeFailure(callCtx, fail); f != nil {
		return 0, f
	}
	if i.nearMemoryLimit() {
		return 0, fail(sandbox.FailureMemory, 0, fmt.Errorf("trap with memory at its limit of %s: %w", bytesize.Exact(i.limits.Memory), i.err))
	}
	return 0, fail(sandbox.FailureTrap, 0, i.err)
}

// causeFailure explains a cancelled instance, or returns nil if it was not
// cancelled.
func (i *instance) causeFailure(callCtx context.Context, fail func(sandbox.FailureKind, uint32, error) *sandbox.Failure) *sandbox.Failure {
	if i.ctx.Err() == nil {
		return nil
	}
	switch cause := context.Cause(i.ctx); {
	case cause == errTimeout || cause == errStartTimeout:
		return fail(sandbox.FailureTimeout, 0, fmt.Errorf("no result within %s: %w", i.limits.Timeout, context.DeadlineExceeded))
	case cause == errFlood:
		return fail(sandbox.FailureOutput, 0, fmt.Errorf("output flood: more than %s written to stdout or stderr (max_output is %s)", bytesize.Exact(uint64(2*i.limits.MaxOutput)), bytesize.Exact(uint64(i.limits.MaxOutput))))
	case callCtx != nil && callCtx.Err() != nil:
		return fail(sandbox.FailureCanceled, 0, context.Cause(callCtx))
	default:
		return fail(sandbox.FailureCanceled, 0, cause)
	}
}

// nearMemoryLimit reports whether the guest's memory ended within one Go
// heap arena step (or an eighth) of its limit: the failure was most likely
// an allocation the limit refused.
func (i *instance) nearMemoryLimit() bool {
	slack := i.limits.Memory / 8
	if slack > 8<<20 {
		slack = 8 << 20
	}
	return i.memBytes > 0 && i.memBytes+slack >= i.limits.Memory
}

// newModule waits for the compiled module and instantiates it with cfg,
// its memory allocated through guestmem (i.mem); it returns the module
// and the context that allocates, or nil with i.err set.
func (i *instance) newModule(cfg wazero.ModuleConfig) (api.Module, context.Context) {
	cm, err := i.mod.wait(i.ctx)
	if err != nil {
		i.err = err
		return nil, nil
	}
	i.r.started.Add(1)
	ctx, mem := guestmem.With(i.ctx)
	i.mem = mem
	mod, err := i.r.instantiate(ctx, cm, cfg)
	if err != nil {
		i.err = err
		return nil, nil
	}
	i.instantiated = true
	return mod, ctx
}

// execExtism instantiates an Extism plugin, initialises its language
// runtime, waits for its input (a pre-started instance waits here) and
// calls its export.
func (i *instance) execExtism(cfg wazero.ModuleConfig) api.Module {
	mod, ctx := i.newModule(cfg)
	if mod == nil {
		return nil
	}
	defer func() { i.memBytes = memorySize(mod) }()
	if err := i.ext.Init(ctx, mod, i.extFn); err != nil {
		i.err = err
		return mod
	}
	if i.held != nil {
		return mod // kept to serve calls (extism_reuse.go)
	}
	fn := mod.ExportedFunction(i.extFn)
	if fn == nil {
		i.err = fmt.Errorf("module exports no function %q", i.extFn)
		return mod
	}
	input, err := io.ReadAll(i.stdin)
	if err != nil {
		i.err = err
		return mod
	}
	i.err = i.ext.Invoke(ctx, fn, input)
	return mod
}
