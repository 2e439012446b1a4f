package extism

import (
	"context"
	enc "encoding/binary"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/sandbox"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/plugin/internal/notify"
	"github.com/agenthost/agenthost/internal/hostmem"
	"github.com/agenthost/agenthost/loop"
)

// ModuleName is the import module of Extism plugins.
const ModuleName = "extism:host/env"

// callKey is the context key of the *Call of a guest call.
type callKey struct{}

// arenaBase is the first offset handed out: 0 means "no block".
const arenaBase = 8

// maxVarBytes bounds a plugin's vars (names and values, all together).
const maxVarBytes = 1 << 20

// maxLogBytes bounds one log message kept from a plugin.
const maxLogBytes = 4 << 10

// ErrMemory marks an allocation refused by the memory limit.
var ErrMemory = errors.New("extism memory exceeds the memory limit")

// Call is the host-side state of one instance of an Extism plugin: its
// memory blocks, the call's input, output and error. A Call serves one
// goroutine at a time.
type Call struct {
	p *Plugin
	// budget bounds the arena (the sandbox's rule, package hostmem):
	// its growth is charged, its shrinking given back.
	budget *hostmem.Budget
	mem    []byte
	blocks map[uint64]uint64 // offset → length of each live block

	input          []byte
	inputOff       uint64
	output         []byte
	outOff, outLen uint64
	errMsg         *string

	// lastStatus and lastHeaders describe the last http_request.
	lastStatus  int32
	lastHeaders map[string]string

	// hostErr is a refusal of the host (memory, http, vars) that stopped
	// the guest; it explains the trap that follows.
	hostErr error
	// rc is the export's return value (0 when it returns nothing).
	rc uint32

	// client takes requests (user.go); notes routes progress and logs
	// to the client and the report.
	client loop.CallClient
	report loop.CallReport
	notes  *notify.Sink

	ctx context.Context
	log zerolog.Logger
}

// Plugin is the state an Extism plugin keeps across calls: its config, its
// vars and its HTTP allowlist.
type Plugin struct {
	name   string
	config map[string]string
	http   *allowlist

	mu   sync.Mutex
	vars map[string][]byte

	// toolsChanged, resourcesChanged and promptsChanged are set by the
	// notify_*_list_changed functions, updated holds the URIs of
	// notify_resource_updated (user.go).
	toolsChanged, resourcesChanged, promptsChanged atomic.Bool
	updated                                        []string
}

// NewPlugin makes the state of the Extism plugin name: config is what
// config_get reads; allow the origins (scheme://host[:port], host may start
// with "*.") its http_request may reach. The error names a bad origin.
func NewPlugin(name string, config map[string]string, allow []string) (*Plugin, error) {
	a, err := parseAllow(allow)
	if err != nil {
		return nil, err
	}
	c := maps.Clone(config)
	if c == nil {
		c = map[string]string{}
	}
	return &Plugin{name: name, config: c, http: a, vars: map[string][]byte{}}, nil
}

// Close releases the plugin's idle HTTP connections.
func (p *Plugin) Close() { p.http.client.CloseIdleConnections() }

// NewCall makes the state of one instance of p: its arena holds at most
// limit bytes; ctx bounds its HTTP requests; log takes its log messages.
func NewCall(ctx context.Context, p *Plugin, limit uint64, log zerolog.Logger) *Call {
	return &Call{p: p, budget: hostmem.New(limit), mem: make([]byte, arenaBase, 512), blocks: map[uint64]uint64{}, ctx: ctx, log: log, notes: notify.New(p.name, log)}
}

// Output is what the guest set with output_set.
func (c *Call) Output() []byte { return c.output }

// Returned is the export's return value (0 when it returns nothing).
func (c *Call) Returned() uint32 { return c.rc }

// ErrorMessage is what the guest set with error_set, and whether it set
// one.
func (c *Call) ErrorMessage() (string, bool) {
	if c.errMsg == nil {
		return "", false
	}
	return *c.errMsg, true
}

// HostError is the host's refusal (memory, http, vars) that stopped the
// guest, or nil; errors.Is(err, ErrMemory) for the memory limit.
func (c *Call) HostError() error { return c.hostErr }

// Init initialises the language runtime of mod, as Extism does, before its
// export fn is called: a WASI reactor by _initialize, a command by
// __wasm_call_ctors (unless fn is itself one of those), and Haskell's
// runtime by hs_init. Host functions called meanwhile use c.
func (c *Call) Init(ctx context.Context, mod api.Module, fn string) error {
	ctx = context.WithValue(ctx, callKey{}, c)
	init := mod.ExportedFunction("_initialize")
	if init == nil {
		init = mod.ExportedFunction("__wasm_call_ctors")
	}
	if init != nil && fn != "_start" && fn != "_initialize" {
		if _, err := init.Call(ctx); err != nil {
			return err
		}
	}
	if hs := mod.ExportedFunction("hs_init"); hs != nil && len(hs.Definition().ParamTypes()) == 2 {
		if _, err := hs.Call(ctx, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// Invoke calls the export fn with input as the call's input; Returned
// then holds its return value.
func (c *Call) Invoke(ctx context.Context, fn api.Function, input []byte) error {
	c.setInput(input)
	res, err := fn.Call(context.WithValue(ctx, callKey{}, c))
	if err == nil && len(res) > 0 {
		c.rc = uint32(res[0])
	}
	return err
}

// fail records a host refusal and stops the guest with it.
func (c *Call) fail(err error) {
	if c.hostErr == nil {
		c.hostErr = err
	}
	panic(err)
}

func (c *Call) alloc(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	off := (uint64(len(c.mem)) + 7) &^ 7
	end := off + n
	if end < off || c.budget.Charge(end-uint64(len(c.mem)), "extism memory") != nil {
		c.fail(fmt.Errorf("%w (%s): allocating %d bytes", ErrMemory, bytesize.Exact(c.budget.Limit()), n))
	}
	if end > uint64(cap(c.mem)) {
		grown := make([]byte, end, min(max(end, 2*uint64(cap(c.mem))), c.budget.Limit()))
		copy(grown, c.mem)
		c.mem = grown
	} else {
		c.mem = c.mem[:end]
	}
	clear(c.mem[off:end])
	c.blocks[off] = n
	return off
}

func (c *Call) free(off uint64) {
	n, ok := c.blocks[off]
	if !ok {
		return
	}
	delete(c.blocks, off)
	if off+n == uint64(len(c.mem)) {
		c.budget.Release(uint64(len(c.mem)) - off)
		c.mem = c.mem[:off] // the last block: its room is reused
	}
}

// block returns the bytes of the block at off ("" for 0); an offset that is
// not the start of a live block traps, as in Extism.
func (c *Call) block(off uint64) []byte {
	if off == 0 {
		return nil
	}
	n, ok := c.blocks[off]
	if !ok {
		c.fail(fmt.Errorf("extism: %d is not the offset of an allocated block", off))
	}
	return c.mem[off : off+n]
}

func (c *Call) write(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	off := c.alloc(uint64(len(b)))
	copy(c.mem[off:], b)
	return off
}

func (c *Call) check(off, size uint64) {
	if off < arenaBase || off+size < off || off+size > uint64(len(c.mem)) {
		c.fail(fmt.Errorf("extism: memory access out of bounds at %d", off))
	}
}

func (c *Call) setInput(b []byte) {
	c.input = b
	c.inputOff = c.write(b)
}

func (c *Call) setOutput(off, n uint64) {
	c.check(off, n)
	c.outOff, c.outLen = off, n
	// All of it: the arena is within the memory limit, and a
	// CallToolResult must be read whole; max_output applies to the text
	// the model gets.
	c.output = append(c.output[:0], c.mem[off:off+n]...)
}

// callOf returns the state of the guest call running with ctx. A host
// function called outside a call (which the host never does) traps.
func callOf(ctx context.Context) *Call {
	c, ok := ctx.Value(callKey{}).(*Call)
	if !ok {
		panic("extism host function called outside an Extism call")
	}
	return c
}

// hostFunc is a host function: its signature and what it does for a call.
type hostFunc struct {
	params, results []api.ValueType
	fn              func(c *Call, stack []uint64)
}

// funcs are the functions of the host module, by name.
var funcs = map[string]hostFunc{
	"alloc":         {p(i64), p(i64), func(c *Call, s []uint64) { s[0] = c.alloc(s[0]) }},
	"free":          {p(i64), nil, func(c *Call, s []uint64) { c.free(s[0]) }},
	"length":        {p(i64), p(i64), func(c *Call, s []uint64) { s[0] = c.blocks[s[0]] }},
	"length_unsafe": {p(i64), p(i64), func(c *Call, s []uint64) { s[0] = c.blocks[s[0]] }},
	"load_u8": {p(i64), p(i32), func(c *Call, s []uint64) {
		c.check(s[0], 1)
		s[0] = uint64(c.mem[s[0]])
	}},
	"load_u64": {p(i64), p(i64), func(c *Call, s []uint64) {
		c.check(s[0], 8)
		s[0] = enc.LittleEndian.Uint64(c.mem[s[0]:])
	}},
	"store_u8": {p(i64, i32), nil, func(c *Call, s []uint64) {
		c.check(s[0], 1)
		c.mem[s[0]] = byte(s[1])
	}},
	"store_u64": {p(i64, i64), nil, func(c *Call, s []uint64) {
		c.check(s[0], 8)
		enc.LittleEndian.PutUint64(c.mem[s[0]:], s[1])
	}},
	"input_length": {nil, p(i64), func(c *Call, s []uint64) { s[0] = uint64(len(c.input)) }},
	"input_offset": {nil, p(i64), func(c *Call, s []uint64) { s[0] = c.inputOff }},
	"input_load_u8": {p(i64), p(i32), func(c *Call, s []uint64) {
		if s[0] >= uint64(len(c.input)) {
			c.fail(fmt.Errorf("extism: input read out of bounds at %d", s[0]))
		}
		s[0] = uint64(c.input[s[0]])
	}},
	"input_load_u64": {p(i64), p(i64), func(c *Call, s []uint64) {
		if s[0]+8 < s[0] || s[0]+8 > uint64(len(c.input)) {
			c.fail(fmt.Errorf("extism: input read out of bounds at %d", s[0]))
		}
		s[0] = enc.LittleEndian.Uint64(c.input[s[0]:])
	}},
	"input_set": {p(i64, i64), nil, func(c *Call, s []uint64) {
		c.check(s[0], s[1])
		c.input = append([]byte(nil), c.mem[s[0]:s[0]+s[1]]...)
		c.inputOff = s[0]
	}},
	"output_set":    {p(i64, i64), nil, func(c *Call, s []uint64) { c.setOutput(s[0], s[1]) }},
	"output_length": {nil, p(i64), func(c *Call, s []uint64) { s[0] = c.outLen }},
	"output_offset": {nil, p(i64), func(c *Call, s []uint64) { s[0] = c.outOff }},
	"reset": {nil, nil, func(c *Call, s []uint64) {
		c.budget.Release(uint64(len(c.mem)) - arenaBase)
		c.mem = c.mem[:arenaBase]
		clear(c.blocks)
		c.inputOff, c.outOff, c.outLen = 0, 0, 0
	}},
	"memory_bytes": {nil, p(i64), func(c *Call, s []uint64) { s[0] = uint64(len(c.mem)) }},
	"error_set": {p(i64), nil, func(c *Call, s []uint64) {
		if s[0] == 0 {
			c.errMsg = nil
			return
		}
		msg := sandbox.ValidUTF8(c.block(s[0]))
		c.errMsg = &msg
	}},
	"error_get": {nil, p(i64), func(c *Call, s []uint64) {
		s[0] = 0
		if c.errMsg != nil {
			s[0] = c.write([]byte(*c.errMsg))
		}
	}},
	"config_get": {p(i64), p(i64), func(c *Call, s []uint64) {
		v, ok := c.p.config[string(c.block(s[0]))]
		s[0] = 0
		if ok {
			s[0] = c.write([]byte(v))
		}
	}},
	"var_get": {p(i64), p(i64), func(c *Call, s []uint64) {
		name := string(c.block(s[0]))
		c.p.mu.Lock()
		v := c.p.vars[name]
		c.p.mu.Unlock()
		s[0] = c.write(v)
	}},
	"var_set": {p(i64, i64), nil, func(c *Call, s []uint64) { c.varSet(string(c.block(s[0])), s[1]) }},
	"http_request": {p(i64, i64), p(i64), func(c *Call, s []uint64) {
		s[0] = c.httpRequest(s[0], s[1])
	}},
	"http_status_code": {nil, p(i32), func(c *Call, s []uint64) { s[0] = uint64(uint32(c.lastStatus)) }},
	"http_headers":     {nil, p(i64), func(c *Call, s []uint64) { s[0] = c.httpHeaders() }},
	"get_log_level":    {nil, p(i32), func(c *Call, s []uint64) { s[0] = uint64(extismLogLevel(c.log.GetLevel())) }},
	"log_trace":        {p(i64), nil, func(c *Call, s []uint64) { c.logMsg(zerolog.TraceLevel, s[0]) }},
	"log_debug":        {p(i64), nil, func(c *Call, s []uint64) { c.logMsg(zerolog.DebugLevel, s[0]) }},
	"log_info":         {p(i64), nil, func(c *Call, s []uint64) { c.logMsg(zerolog.InfoLevel, s[0]) }},
	"log_warn":         {p(i64), nil, func(c *Call, s []uint64) { c.logMsg(zerolog.WarnLevel, s[0]) }},
	"log_error":        {p(i64), nil, func(c *Call, s []uint64) { c.logMsg(zerolog.ErrorLevel, s[0]) }},
}

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

func p(ts ...api.ValueType) []api.ValueType { return ts }

func (c *Call) varSet(name string, valOff uint64) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if valOff == 0 {
		delete(c.p.vars, name)
		return
	}
	val := c.block(valOff)
	size := len(name) + len(val)
	for k, v := range c.p.vars {
		if k != name {
			size += len(k) + len(v)
		}
	}
	if size > maxVarBytes {
		c.fail(fmt.Errorf("extism: var_set %q refused: the plugin's vars would exceed %s", name, bytesize.Exact(maxVarBytes)))
	}
	c.p.vars[name] = append([]byte(nil), val...)
}

// extismLogLevel is Extism's number for the least severe level logged
// (trace 0 … error 4, off MaxInt32).
func extismLogLevel(l zerolog.Level) int32 {
	switch {
	case l <= zerolog.TraceLevel:
		return 0
	case l <= zerolog.ErrorLevel:
		return int32(l) + 1 // zerolog: debug 0 … error 3
	}
	return 1<<31 - 1
}

func (c *Call) logMsg(level zerolog.Level, off uint64) {
	b := c.block(off)
	if len(b) > maxLogBytes {
		b = b[:maxLogBytes]
	}
	c.log.WithLevel(level).Str("plugin", c.p.name).Msg(sandbox.ValidUTF8(b))
	c.free(off)
}

// Instantiate adds the host module "extism:host/env" to rt and returns its
// functions by name. Each host function finds the state of its call in the
// context the guest was called with (Call.Init, Call.Invoke).
func Instantiate(ctx context.Context, rt wazero.Runtime) (map[string]api.FunctionDefinition, error) {
	return instantiate(ctx, rt, ModuleName, funcs)
}

// instantiate adds the host module name with the functions fs to rt and
// returns its functions by name.
func instantiate(ctx context.Context, rt wazero.Runtime, name string, fs map[string]hostFunc) (map[string]api.FunctionDefinition, error) {
	b := rt.NewHostModuleBuilder(name)
	for _, n := range slices.Sorted(maps.Keys(fs)) {
		f := fs[n]
		fn := f.fn
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			fn(callOf(ctx), stack)
		}), f.params, f.results).Export(n)
	}
	mod, err := b.Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	return maps.Clone(mod.ExportedFunctionDefinitions()), nil
}

// Var returns a copy of the plugin's var name (nil when unset).
func (p *Plugin) Var(name string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.vars[name]...)
}

// SetVar sets the plugin's var name, as var_set does, without its cap.
func (p *Plugin) SetVar(name string, value []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.vars[name] = append([]byte(nil), value...)
}
