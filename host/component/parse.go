package component

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// Section ids of the component binary format.
const (
	secCustom       = 0
	secCoreModule   = 1
	secCoreInstance = 2
	secCoreType     = 3
	secComponent    = 4
	secInstance     = 5
	secAlias        = 6
	secType         = 7
	secCanon        = 8
	secStart        = 9
	secImport       = 10
	secExport       = 11
	secValue        = 12
)

// Sorts.
const (
	sortCore      = 0x00
	sortFunc      = 0x01
	sortValue     = 0x02
	sortType      = 0x03
	sortComponent = 0x04
	sortInstance  = 0x05

	coreSortFunc     = 0x00
	coreSortTable    = 0x01
	coreSortMemory   = 0x02
	coreSortGlobal   = 0x03
	coreSortTag      = 0x04
	coreSortType     = 0x10
	coreSortModule   = 0x11
	coreSortInstance = 0x12
)

// Limits on what a component may declare: generous for every toolchain's
// output, small enough that a hostile binary cannot make loading costly.
const (
	maxCoreModules = 32
	maxDefinitions = 1 << 16 // per index space
	maxNesting     = 2       // the component and its shim components
	// Core instances: each is linked at load (a bundle of exports is
	// compiled, a module's imports checked) and made again for every
	// call. wit-component instantiates each module once; a JavaScript
	// component from ComponentizeJS has 35 core instances.
	maxCoreInstances      = 512
	maxCoreInstantiations = 2 * maxCoreModules
)

// ErrShape is wrapped by errors for components outside the supported
// shape (nested components with code, async, exported resources, ...).
var ErrShape = errors.New("unsupported component")

func shapeError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrShape, fmt.Sprintf(format, args...))
}

// typeDef is an entry of a type index space.
type typeDef struct {
	val  *Type
	fn   *FuncType
	inst *instType
	comp *instType // a component type: its imports and exports
	res  *Resource
	// imported is set, in a shim component, for a type import; the type
	// comes from the instantiation's arguments.
	imported string
}

type scope struct {
	parent *scope
	types  []typeDef
	// depth counts the scopes out to the outermost component's (1).
	depth int
}

func newScope(parent *scope) *scope {
	sc := &scope{parent: parent, depth: 1}
	if parent != nil {
		sc.depth = parent.depth + 1
	}
	return sc
}

// maxScopes bounds how deeply scopes nest: components, and instance and
// component types declared inside one another (each a recursion of the
// parser). wit-component's output nests at most four deep.
const maxScopes = 16

// instType is an instance type: its exports by name.
type instType struct {
	names   []string
	exports map[string]extern
	imports map[string]extern // component types only
	// res are the resources it declares, named by export name.
	res map[string]*Resource
}

type extern struct {
	sort byte // sortFunc, sortType, sortInstance, sortComponent, ...
	fn   *FuncType
	typ  typeDef
	inst *instType
}

type canonOpts struct {
	enc        byte // 0 utf8, 1 utf16, 2 latin1+utf16
	memory     int  // core memory index; -1 none
	realloc    int  // core func index; -1 none
	postReturn int  // core func index; -1 none
	async      bool
}

type coreRef struct {
	inst int
	name string
}

type coreFuncKind byte

const (
	cfExport coreFuncKind = iota // an export of a core instance
	cfLower                      // canon lower of a component function
	cfDrop                       // canon resource.drop
)

type coreFunc struct {
	kind coreFuncKind
	ref  coreRef
	fn   int // component function (cfLower)
	opts canonOpts
	res  *Resource // cfDrop
}

type coreInst struct {
	module int // -1: a bundle of exports
	args   []coreArg
	items  []bundleItem
}

type coreArg struct {
	name string
	inst int
}

type bundleItem struct {
	name string
	sort byte
	idx  int
}

type compFuncKind byte

const (
	fnImport     compFuncKind = iota // a function of an imported instance, or a top-level import
	fnLift                           // canon lift
	fnShimImport                     // an import of a shim component
)

type compFunc struct {
	kind compFuncKind
	// iface and name identify an imported function: the instance's name
	// ("wasi:io/streams@0.2.3", "" for a top-level import) and the
	// function's name in it.
	iface, name string
	ft          *FuncType
	core        int // fnLift: core function
	opts        canonOpts
}

type compInst struct {
	// importName and itype are set for an imported instance.
	importName string
	itype      *instType
	// funcs are the functions of an instance made in the component (a
	// shim's instantiation or inline exports): name -> function index.
	funcs map[string]int
	names []string
}

type exportDef struct {
	name string
	sort byte
	idx  int
}

// comp is a parsed component (or shim component).
type comp struct {
	depth      int
	sc         *scope
	modules    [][]byte
	coreInsts  []*coreInst
	coreFuncs  []*coreFunc
	coreMems   []coreRef
	coreTables []coreRef
	coreGlobal []coreRef
	coreTypes  int
	funcs      []*compFunc
	insts      []*compInst
	comps      []*comp
	imports    []string
	exports    []exportDef
	docs       []byte // the package-docs custom section
	// instantiations counts core instances made from modules.
	instantiations int
	// funcExports are a shim's exports of functions.
	funcExports []exportDef
}

// parseComponent parses a component binary.
func parseComponent(b []byte) (*comp, error) {
	switch wasmbin.ReadHeader(b) {
	case wasmbin.HeaderNotWasm, wasmbin.HeaderTruncated:
		return nil, errors.New("not a WebAssembly binary (it does not start with \\0asm)")
	case wasmbin.HeaderModule, wasmbin.HeaderOtherVersion:
		return nil, errors.New("a WebAssembly core module, not a component (its layer field is 0)")
	}
	if b[4] != 0x0d || b[5] != 0 {
		return nil, fmt.Errorf("component binary version 0x%02x%02x is not supported (0x000d is)", b[5], b[4])
	}
	return parseComp(b[8:], 8, nil, 0)
}

func parseComp(b []byte, base int, parent *scope, depth int) (*comp, error) {
	c := &comp{depth: depth, sc: newScope(parent)}
	secs, err := wasmbin.Sections(b, base)
	if err != nil {
		return nil, err
	}
	for _, s := range secs {
		r := wasmbin.NewReader(s.Data, s.Off)
		if err := c.section(s, r); err != nil {
			return nil, err
		}
		if s.ID != secCustom && s.ID != secCoreModule && s.ID != secComponent && !r.EOF() {
			return nil, r.Fail("section %d has %d bytes left over", s.ID, len(r.Rest()))
		}
		if len(c.coreFuncs) > maxDefinitions || len(c.funcs) > maxDefinitions || len(c.sc.types) > maxDefinitions ||
			len(c.coreInsts) > maxDefinitions || len(c.insts) > maxDefinitions {
			return nil, r.Fail("more than %d definitions of one kind (core functions, functions, types or instances), agenthost's limit", maxDefinitions)
		}
	}
	return c, nil
}

func (c *comp) section(s wasmbin.Section, r *reader) error {
	switch s.ID {
	case secCustom:
		name, err := r.Name()
		if err != nil {
			return err
		}
		if name == "package-docs" && c.depth == 0 {
			c.docs = r.Rest()
		}
		return nil
	case secCoreModule:
		if c.depth > 0 {
			return shapeError("a nested component contains a core module; only the flat shape of wit-component's output (core modules at the top level) is supported")
		}
		if len(c.modules) >= maxCoreModules {
			return shapeError("more than %d core modules", maxCoreModules)
		}
		c.modules = append(c.modules, s.Data)
		return nil
	case secComponent:
		if c.depth+1 >= maxNesting {
			return shapeError("components nested inside nested components are not supported")
		}
		if len(s.Data) < 8 || !bytes.Equal(s.Data[:4], []byte("\x00asm")) {
			return r.Fail("nested component has no header")
		}
		n, err := parseComp(s.Data[8:], s.Off+8, c.sc, c.depth+1)
		if err != nil {
			return err
		}
		// A shim exports the functions it imports (and their types).
		for _, e := range n.exports {
			switch e.sort {
			case sortFunc:
				n.funcExports = append(n.funcExports, e)
			case sortType:
				// Types re-exported by the shim: the functions' types
				// already name them.
			default:
				return shapeError("nested component %d exports %s", len(c.comps), aSort(e.sort))
			}
		}
		c.comps = append(c.comps, n)
		return nil
	case secStart:
		return shapeError("component start functions are not supported")
	case secValue:
		return shapeError("component value definitions are not supported")
	}
	_, err := r.Vec(func() error {
		var err error
		switch s.ID {
		case secCoreInstance:
			err = c.coreInstance(r)
		case secCoreType:
			err = skipCoreType(r)
			c.coreTypes++
		case secInstance:
			err = c.instance(r)
		case secAlias:
			err = c.alias(r)
		case secType:
			var td typeDef
			td, err = parseDefType(r, c.sc, true)
			if err == nil && td.res != nil {
				err = shapeError("the component defines resource type %d: exported resources are not supported", len(c.sc.types))
			}
			c.sc.types = append(c.sc.types, td)
		case secCanon:
			err = c.canon(r)
		case secImport:
			err = c.importDef(r)
		case secExport:
			err = c.exportDef(r)
		default:
			return r.Fail("unknown section id %d", s.ID)
		}
		return err
	})
	return err
}

func (c *comp) coreInstance(r *reader) error {
	if c.depth > 0 {
		return shapeError("a nested component instantiates core modules")
	}
	if len(c.coreInsts) >= maxCoreInstances {
		return shapeError("more than %d core instances", maxCoreInstances)
	}
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	switch tag {
	case 0x00:
		m, err := r.U32()
		if err != nil {
			return err
		}
		if int(m) >= len(c.modules) {
			return r.Fail("core module %d does not exist", m)
		}
		if c.instantiations++; c.instantiations > maxCoreInstantiations {
			return shapeError("more than %d instantiations of core modules", maxCoreInstantiations)
		}
		ci := &coreInst{module: int(m)}
		if _, err := r.Vec(func() error {
			name, err := r.Name()
			if err != nil {
				return err
			}
			if s, err := r.Byte(); err != nil {
				return err
			} else if s != coreSortInstance {
				return r.Fail("core instantiation argument %q is not an instance", name)
			}
			i, err := r.U32()
			if err != nil {
				return err
			}
			if int(i) >= len(c.coreInsts) {
				return r.Fail("core instance %d does not exist", i)
			}
			ci.args = append(ci.args, coreArg{name, int(i)})
			return nil
		}); err != nil {
			return err
		}
		c.coreInsts = append(c.coreInsts, ci)
	case 0x01:
		ci := &coreInst{module: -1}
		if _, err := r.Vec(func() error {
			name, s, i, err := readCoreExport(r)
			if err != nil {
				return err
			}
			var limit int
			switch s {
			case coreSortFunc:
				limit = len(c.coreFuncs)
			case coreSortTable:
				limit = len(c.coreTables)
			case coreSortMemory:
				limit = len(c.coreMems)
			case coreSortGlobal:
				limit = len(c.coreGlobal)
			default:
				return shapeError("a core instance exports sort 0x%02x", s)
			}
			if int(i) >= limit {
				return r.Fail("core export %q refers to a missing definition %d", name, i)
			}
			ci.items = append(ci.items, bundleItem{name, s, int(i)})
			return nil
		}); err != nil {
			return err
		}
		c.coreInsts = append(c.coreInsts, ci)
	default:
		return r.Fail("unknown core instance form 0x%02x", tag)
	}
	return nil
}

// instance handles the component instance section: at the top level, the
// instantiation of a shim component (how wit-component exports an
// interface) or inline exports.
func (c *comp) instance(r *reader) error {
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	ci := &compInst{funcs: map[string]int{}}
	switch tag {
	case 0x00:
		ni, err := r.U32()
		if err != nil {
			return err
		}
		if int(ni) >= len(c.comps) {
			return r.Fail("component %d does not exist", ni)
		}
		args := map[string]sortIdx{}
		if _, err := r.Vec(func() error {
			name, err := r.Name()
			if err != nil {
				return err
			}
			si, err := c.sortIdx(r)
			if err != nil {
				return err
			}
			args[name] = si
			return nil
		}); err != nil {
			return err
		}
		// The shim's exports were checked when it was parsed (shimExports):
		// what is done here, for each instantiation, is bounded by its
		// own arguments.
		shim := c.comps[ni]
		for _, e := range shim.funcExports {
			f := shim.funcs[e.idx]
			a, ok := args[f.name]
			if f.kind != fnShimImport || !ok || a.sort != sortFunc {
				return shapeError("nested component %d exports function %q that is not one of its imports", ni, e.name)
			}
			ci.funcs[e.name] = a.idx
			ci.names = append(ci.names, e.name)
		}
	case 0x01:
		if _, err := r.Vec(func() error {
			name, err := externName(r)
			if err != nil {
				return err
			}
			si, err := c.sortIdx(r)
			if err != nil {
				return err
			}
			switch si.sort {
			case sortFunc:
				ci.funcs[name] = si.idx
				ci.names = append(ci.names, name)
			case sortType:
			default:
				return shapeError("an instance exports %s", aSort(si.sort))
			}
			return nil
		}); err != nil {
			return err
		}
	default:
		return r.Fail("unknown instance form 0x%02x", tag)
	}
	c.insts = append(c.insts, ci)
	return nil
}

type sortIdx struct {
	sort byte
	core byte
	idx  int
}

// readSort reads a sort: s, and for a core sort (sortCore) the core
// sort cs.
func readSort(r *reader) (s, cs byte, err error) {
	if s, err = r.Byte(); err == nil && s == sortCore {
		cs, err = r.Byte()
	}
	return s, cs, err
}

func (c *comp) sortIdx(r *reader) (sortIdx, error) {
	s, cs, err := readSort(r)
	if err != nil {
		return sortIdx{}, err
	}
	i, err := r.U32()
	if err != nil {
		return sortIdx{}, err
	}
	var limit int
	switch s {
	case sortFunc:
		limit = len(c.funcs)
	case sortType:
		limit = len(c.sc.types)
	case sortInstance:
		limit = len(c.insts)
	case sortComponent:
		limit = len(c.comps)
	case sortCore:
		switch cs {
		case coreSortModule:
			limit = len(c.modules)
		case coreSortFunc:
			limit = len(c.coreFuncs)
		default:
			return sortIdx{}, shapeError("a reference to core sort 0x%02x", cs)
		}
	default:
		return sortIdx{}, shapeError("a reference to %s", aSort(s))
	}
	if int(i) >= limit {
		return sortIdx{}, r.Fail("%s index %d is out of range", sortName(s), i)
	}
	return sortIdx{s, cs, int(i)}, nil
}

func sortName(s byte) string {
	switch s {
	case sortCore:
		return "core definition"
	case sortFunc:
		return "function"
	case sortValue:
		return "value"
	case sortType:
		return "type"
	case sortComponent:
		return "component"
	case sortInstance:
		return "instance"
	}
	return fmt.Sprintf("sort 0x%02x", s)
}

// aSort is sortName with its article, for errors ("an instance").
func aSort(s byte) string {
	if s == sortInstance {
		return "an instance"
	}
	return "a " + sortName(s)
}

// readIdxName reads the instance and the name of an export alias.
func readIdxName(r *reader) (uint32, string, error) {
	i, err := r.U32()
	if err != nil {
		return 0, "", err
	}
	name, err := r.Name()
	return i, name, err
}

func (c *comp) alias(r *reader) error {
	s, cs, err := readSort(r)
	if err != nil {
		return err
	}
	target, err := r.Byte()
	if err != nil {
		return err
	}
	switch target {
	case 0x00: // export of a component instance
		i, name, err := readIdxName(r)
		if err != nil {
			return err
		}
		if int(i) >= len(c.insts) {
			return r.Fail("instance %d does not exist", i)
		}
		inst := c.insts[i]
		switch s {
		case sortFunc:
			if inst.itype != nil {
				e, ok := inst.itype.exports[name]
				if !ok || e.sort != sortFunc {
					return r.Fail("imported instance %q has no function %q", inst.importName, name)
				}
				c.funcs = append(c.funcs, &compFunc{kind: fnImport, iface: inst.importName, name: name, ft: e.fn})
				return nil
			}
			fi, ok := inst.funcs[name]
			if !ok {
				return r.Fail("instance %d has no function %q", i, name)
			}
			c.funcs = append(c.funcs, c.funcs[fi])
		case sortType:
			if inst.itype == nil {
				return shapeError("a type alias of a shim instance's export %q", name)
			}
			e, ok := inst.itype.exports[name]
			if !ok || e.sort != sortType {
				return r.Fail("imported instance %q has no type %q", inst.importName, name)
			}
			c.sc.types = append(c.sc.types, e.typ)
		default:
			return shapeError("an alias of an instance's %s export %q", sortName(s), name)
		}
	case 0x01: // export of a core instance
		i, name, err := readIdxName(r)
		if err != nil {
			return err
		}
		if int(i) >= len(c.coreInsts) {
			return r.Fail("core instance %d does not exist", i)
		}
		if s != sortCore {
			return r.Fail("core export alias of %s", aSort(s))
		}
		ref := coreRef{int(i), name}
		switch cs {
		case coreSortFunc:
			c.coreFuncs = append(c.coreFuncs, &coreFunc{kind: cfExport, ref: ref})
		case coreSortMemory:
			c.coreMems = append(c.coreMems, ref)
		case coreSortTable:
			c.coreTables = append(c.coreTables, ref)
		case coreSortGlobal:
			c.coreGlobal = append(c.coreGlobal, ref)
		default:
			return shapeError("an alias of a core export of sort 0x%02x", cs)
		}
	case 0x02: // outer
		ct, err := r.U32()
		if err != nil {
			return err
		}
		idx, err := r.U32()
		if err != nil {
			return err
		}
		if s == sortCore && cs == coreSortType {
			c.coreTypes++
			return nil
		}
		if s != sortType {
			return shapeError("an outer alias of %s", aSort(s))
		}
		td, err := outerType(r, c.sc, ct, idx)
		if err != nil {
			return err
		}
		c.sc.types = append(c.sc.types, td)
	default:
		return r.Fail("unknown alias target 0x%02x", target)
	}
	return nil
}

func outerType(r *reader, sc *scope, ct, idx uint32) (typeDef, error) {
	for range ct {
		if sc.parent == nil {
			return typeDef{}, r.Fail("outer alias reaches past the outermost scope")
		}
		sc = sc.parent
	}
	if int(idx) >= len(sc.types) {
		return typeDef{}, r.Fail("outer alias of missing type %d", idx)
	}
	return sc.types[idx], nil
}

func (c *comp) canon(r *reader) error {
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	switch tag {
	case 0x00: // lift
		f, opts, err := c.canonFunc(r, "lift")
		if err != nil {
			return err
		}
		ti, err := r.U32()
		if err != nil {
			return err
		}
		if int(f) >= len(c.coreFuncs) {
			return r.Fail("canon lift of missing core function %d", f)
		}
		if int(ti) >= len(c.sc.types) || c.sc.types[ti].fn == nil {
			return r.Fail("canon lift with type %d, which is not a function type", ti)
		}
		c.funcs = append(c.funcs, &compFunc{kind: fnLift, core: int(f), opts: opts, ft: c.sc.types[ti].fn})
	case 0x01: // lower
		f, opts, err := c.canonFunc(r, "lower")
		if err != nil {
			return err
		}
		if int(f) >= len(c.funcs) {
			return r.Fail("canon lower of missing function %d", f)
		}
		if opts.async {
			return shapeError("canon lower with the async option is not supported")
		}
		c.coreFuncs = append(c.coreFuncs, &coreFunc{kind: cfLower, fn: int(f), opts: opts})
	case 0x03: // resource.drop
		t, err := r.U32()
		if err != nil {
			return err
		}
		if int(t) >= len(c.sc.types) || c.sc.types[t].res == nil {
			return r.Fail("resource.drop of type %d, which is not a resource", t)
		}
		c.coreFuncs = append(c.coreFuncs, &coreFunc{kind: cfDrop, res: c.sc.types[t].res})
	case 0x02, 0x04:
		return shapeError("the component implements its own resource type (canon resource.new/resource.rep): exported resources are not supported")
	default:
		return shapeError("canonical built-in 0x%02x (async, streams, futures or threads) is not supported; only synchronous components are", tag)
	}
	return nil
}

// canonFunc reads what a canon lift or lower (op) starts with: the sort
// of the function (0x00, a function), its index and the options.
func (c *comp) canonFunc(r *reader, op string) (uint32, canonOpts, error) {
	if b, err := r.Byte(); err != nil {
		return 0, canonOpts{}, err
	} else if b != 0x00 {
		return 0, canonOpts{}, r.Fail("canon %s of sort 0x%02x", op, b)
	}
	f, err := r.U32()
	if err != nil {
		return 0, canonOpts{}, err
	}
	opts, err := c.canonOpts(r)
	return f, opts, err
}

func (c *comp) canonOpts(r *reader) (canonOpts, error) {
	o := canonOpts{memory: -1, realloc: -1, postReturn: -1}
	if _, err := r.Vec(func() error {
		tag, err := r.Byte()
		if err != nil {
			return err
		}
		switch tag {
		case 0x00, 0x01, 0x02:
			o.enc = tag
		case 0x03, 0x04, 0x05:
			i, err := r.U32()
			if err != nil {
				return err
			}
			switch tag {
			case 0x03:
				if int(i) >= len(c.coreMems) {
					return r.Fail("canon option names missing core memory %d", i)
				}
				o.memory = int(i)
			case 0x04:
				if int(i) >= len(c.coreFuncs) {
					return r.Fail("canon option names missing core function %d", i)
				}
				o.realloc = int(i)
			case 0x05:
				if int(i) >= len(c.coreFuncs) {
					return r.Fail("canon option names missing core function %d", i)
				}
				o.postReturn = int(i)
			}
		case 0x06:
			o.async = true
		case 0x07:
			if _, err := r.U32(); err != nil {
				return err
			}
			o.async = true
		default:
			return shapeError("canonical option 0x%02x is not supported", tag)
		}
		return nil
	}); err != nil {
		return o, err
	}
	return o, nil
}

func (c *comp) importDef(r *reader) error {
	name, err := externName(r)
	if err != nil {
		return err
	}
	e, err := parseExtern(r, c.sc)
	if err != nil {
		return fmt.Errorf("import %q: %w", name, err)
	}
	c.imports = append(c.imports, name)
	if c.depth > 0 {
		switch e.sort {
		case sortFunc:
			c.funcs = append(c.funcs, &compFunc{kind: fnShimImport, name: name, ft: e.fn})
		case sortType:
			if e.typ.res != nil {
				return shapeError("the component exports resource %q: exported resources are not supported", strings.TrimPrefix(name, "import-type-"))
			}
			e.typ.imported = name
			c.sc.types = append(c.sc.types, e.typ)
		default:
			return shapeError("a nested component imports %s (%q)", aSort(e.sort), name)
		}
		return nil
	}
	switch e.sort {
	case sortInstance:
		iface, _ := splitVersion(name)
		for rn, res := range e.inst.res {
			if res.Key == "" {
				res.Key = iface + "#" + rn
			}
		}
		c.insts = append(c.insts, &compInst{importName: name, itype: e.inst})
	case sortFunc:
		c.funcs = append(c.funcs, &compFunc{kind: fnImport, name: name, ft: e.fn})
	case sortType:
		if e.typ.res != nil && e.typ.res.Key == "" {
			e.typ.res.Key = "#" + name
		}
		c.sc.types = append(c.sc.types, e.typ)
	default:
		return shapeError("the component imports %s (%q); only instances, functions and types can be imported", aSort(e.sort), name)
	}
	return nil
}

func (c *comp) exportDef(r *reader) error {
	name, err := externName(r)
	if err != nil {
		return err
	}
	si, err := c.sortIdx(r)
	if err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	has, err := r.Byte()
	if err != nil {
		return err
	}
	if has == 0x01 {
		if _, err := parseExtern(r, c.sc); err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
	}
	c.exports = append(c.exports, exportDef{name, si.sort, si.idx})
	// An export adds an index to its sort's index space.
	switch si.sort {
	case sortFunc:
		c.funcs = append(c.funcs, c.funcs[si.idx])
	case sortType:
		td := c.sc.types[si.idx]
		if td.res != nil && c.depth == 0 {
			return shapeError("the component exports resource %q: exported resources are not supported", name)
		}
		c.sc.types = append(c.sc.types, td)
	case sortInstance:
		c.insts = append(c.insts, c.insts[si.idx])
	case sortComponent:
		c.comps = append(c.comps, c.comps[si.idx])
	}
	return nil
}

// parseExtern reads an externtype.
func parseExtern(r *reader, sc *scope) (extern, error) {
	tag, err := r.Byte()
	if err != nil {
		return extern{}, err
	}
	switch tag {
	case 0x00:
		if _, err := r.Byte(); err != nil {
			return extern{}, err
		}
		if _, err := r.U32(); err != nil {
			return extern{}, err
		}
		return extern{sort: sortCore}, nil
	case 0x01:
		i, err := r.U32()
		if err != nil {
			return extern{}, err
		}
		if int(i) >= len(sc.types) || sc.types[i].fn == nil {
			return extern{}, r.Fail("type %d is not a function type", i)
		}
		return extern{sort: sortFunc, fn: sc.types[i].fn}, nil
	case 0x02:
		return extern{}, shapeError("value imports and exports are not supported")
	case 0x03:
		b, err := r.Byte()
		if err != nil {
			return extern{}, err
		}
		switch b {
		case 0x00:
			i, err := r.U32()
			if err != nil {
				return extern{}, err
			}
			if int(i) >= len(sc.types) {
				return extern{}, r.Fail("type %d does not exist", i)
			}
			return extern{sort: sortType, typ: sc.types[i]}, nil
		case 0x01:
			return extern{sort: sortType, typ: typeDef{res: &Resource{}}}, nil
		}
		return extern{}, r.Fail("unknown type bound 0x%02x", b)
	case 0x04, 0x05:
		i, err := r.U32()
		if err != nil {
			return extern{}, err
		}
		if int(i) >= len(sc.types) {
			return extern{}, r.Fail("type %d does not exist", i)
		}
		td := sc.types[i]
		if tag == 0x04 {
			if td.comp == nil {
				return extern{}, r.Fail("type %d is not a component type", i)
			}
			return extern{sort: sortComponent, inst: td.comp}, nil
		}
		if td.inst == nil {
			return extern{}, r.Fail("type %d is not an instance type", i)
		}
		return extern{sort: sortInstance, inst: td.inst}, nil
	}
	return extern{}, r.Fail("unknown extern type 0x%02x", tag)
}

// parseDefType reads a deftype into scope sc's terms.
func parseDefType(r *reader, sc *scope, top bool) (typeDef, error) {
	tag, err := r.Peek()
	if err != nil {
		return typeDef{}, err
	}
	switch tag {
	case 0x40, 0x43:
		r.Byte() // the tag Peek read
		ft := &FuncType{Async: tag == 0x43}
		if ft.Params, err = parseFields(r, sc); err != nil {
			return typeDef{}, err
		}
		rk, err := r.Byte()
		if err != nil {
			return typeDef{}, err
		}
		switch rk {
		case 0x00:
			if ft.Result, err = parseValType(r, sc); err != nil {
				return typeDef{}, err
			}
		case 0x01:
			z, err := r.Byte()
			if err != nil {
				return typeDef{}, err
			}
			if z != 0x00 {
				return typeDef{}, shapeError("functions with named results are not supported")
			}
		default:
			return typeDef{}, r.Fail("unknown result list 0x%02x", rk)
		}
		var parts uint64
		seen := map[string]bool{}
		for _, p := range ft.Params {
			if seen[p.Name] {
				return typeDef{}, r.Fail("function has two parameters named %q", p.Name)
			}
			seen[p.Name] = true
			parts += uint64(p.Type.parts)
		}
		if ft.Result != nil {
			parts += uint64(ft.Result.parts)
		}
		if parts > maxTypeParts {
			return typeDef{}, r.Fail("function type's parameters and result have more than %d parts counted as a tree (each use of a type counts again), agenthost's limit", maxTypeParts)
		}
		// The parameters travel in memory as a tuple when they are many
		// (paramsTuple): it must have a size.
		pt := &Type{Kind: Tuple}
		for _, p := range ft.Params {
			pt.Items = append(pt.Items, p.Type)
		}
		if err := pt.layout(); err != nil {
			return typeDef{}, r.Fail("function parameters: %v", err)
		}
		return typeDef{fn: ft}, nil
	case 0x41, 0x42:
		r.Byte() // the tag Peek read
		it, err := parseDecls(r, sc, tag == 0x41)
		if err != nil {
			return typeDef{}, err
		}
		if tag == 0x41 {
			return typeDef{comp: it}, nil
		}
		return typeDef{inst: it}, nil
	case 0x3f, 0x3e:
		r.Byte() // the tag Peek read
		// rep (core valtype), optional destructor
		if _, err := r.Byte(); err != nil {
			return typeDef{}, err
		}
		if has, err := r.Byte(); err != nil {
			return typeDef{}, err
		} else if has == 0x01 {
			if _, err := r.U32(); err != nil {
				return typeDef{}, err
			}
		}
		return typeDef{res: &Resource{}}, nil
	}
	t, err := parseDefValType(r, sc)
	if err != nil {
		return typeDef{}, err
	}
	return typeDef{val: t}, nil
}

var primitives = map[int64]Kind{
	-0x01: Bool, -0x02: S8, -0x03: U8, -0x04: S16, -0x05: U16, -0x06: S32, -0x07: U32,
	-0x08: S64, -0x09: U64, -0x0a: F32, -0x0b: F64, -0x0c: Char, -0x0d: String, -0x1c: ErrorContext,
}

var primTypes = func() map[Kind]*Type {
	m := map[Kind]*Type{}
	for _, k := range primitives {
		t := &Type{Kind: k}
		_ = t.layout()
		m[k] = t
	}
	return m
}()

// parseValType reads a valtype: a primitive or the index of a defined
// value type.
func parseValType(r *reader, sc *scope) (*Type, error) {
	v, err := r.S33()
	if err != nil {
		return nil, err
	}
	if v < 0 {
		k, ok := primitives[v]
		if !ok {
			return nil, r.Fail("unknown primitive value type 0x%02x", byte(v&0x7f))
		}
		return primTypes[k], nil
	}
	if v >= int64(len(sc.types)) {
		return nil, r.Fail("value type %d does not exist", v)
	}
	td := sc.types[v]
	if td.val == nil {
		if td.imported != "" {
			// A shim's type import: its structure is the outer one's,
			// which the shim does not see; the shim's own signatures
			// are not used.
			return primTypes[Bool], nil
		}
		return nil, r.Fail("type %d is not a value type", v)
	}
	return td.val, nil
}

func parseDefValType(r *reader, sc *scope) (*Type, error) {
	v, err := r.S33()
	if err != nil {
		return nil, err
	}
	if k, ok := primitives[v]; ok {
		return primTypes[k], nil
	}
	t := &Type{}
	switch v {
	case -0x0e: // 0x72 record
		t.Kind = Record
		if t.Fields, err = parseFields(r, sc); err != nil {
			return nil, err
		}
		if len(t.Fields) == 0 {
			return nil, r.Fail("record without fields")
		}
	case -0x0f: // 0x71 variant
		t.Kind = Variant
		n, err := r.Vec(func() error {
			l, err := r.Name()
			if err != nil {
				return err
			}
			ct, err := optValType(r, sc)
			if err != nil {
				return err
			}
			if z, err := r.Byte(); err != nil {
				return err
			} else if z != 0x00 {
				return r.Fail("variant case %q refines another case", l)
			}
			t.Cases = append(t.Cases, Case{l, ct})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.Fail("variant without cases")
		}
	case -0x10: // 0x70 list
		t.Kind = List
		if err = valTypes(r, sc, parseValType, &t.Elem); err != nil {
			return nil, err
		}
	case -0x19: // 0x67 fixed-length list
		t.Kind = FixedList
		if err = valTypes(r, sc, parseValType, &t.Elem); err != nil {
			return nil, err
		}
		if t.Len, err = r.U32(); err != nil {
			return nil, err
		}
		if t.Len == 0 {
			return nil, r.Fail("fixed-length list of length 0")
		}
	case -0x11: // 0x6f tuple
		t.Kind = Tuple
		n, err := r.Vec(func() error {
			it, err := parseValType(r, sc)
			t.Items = append(t.Items, it)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.Fail("empty tuple")
		}
	case -0x12, -0x13: // 0x6e flags, 0x6d enum
		t.Kind = Flags
		if v == -0x13 {
			t.Kind = Enum
		}
		n, err := r.Vec(func() error {
			l, err := r.Name()
			t.Names = append(t.Names, l)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n == 0 || (t.Kind == Flags && n > 32) {
			return nil, r.Fail("%s with %d labels", t.Kind, n)
		}
	case -0x15: // 0x6b option
		t.Kind = Option
		if err = valTypes(r, sc, parseValType, &t.Elem); err != nil {
			return nil, err
		}
	case -0x16: // 0x6a result
		t.Kind = Result
		if err = valTypes(r, sc, optValType, &t.Ok, &t.Err); err != nil {
			return nil, err
		}
	case -0x17, -0x18: // 0x69 own, 0x68 borrow
		t.Kind = Own
		if v == -0x18 {
			t.Kind = Borrow
		}
		i, err := r.U32()
		if err != nil {
			return nil, err
		}
		if int(i) >= len(sc.types) || sc.types[i].res == nil {
			if int(i) < len(sc.types) && sc.types[i].imported != "" {
				return nil, shapeError("the component exports resource %q: exported resources are not supported", strings.TrimPrefix(sc.types[i].imported, "import-type-"))
			}
			return nil, r.Fail("handle of type %d, which is not a resource", i)
		}
		t.Resource = sc.types[i].res
	case -0x1a, -0x1b: // 0x66 stream, 0x65 future
		t.Kind = Stream
		if v == -0x1b {
			t.Kind = Future
		}
		if err = valTypes(r, sc, optValType, &t.Elem); err != nil {
			return nil, err
		}
	case -0x1d: // 0x63 map
		t.Kind = Map
		if err = valTypes(r, sc, parseValType, &t.Elem, &t.Val); err != nil {
			return nil, err
		}
	default:
		return nil, r.Fail("unknown value type 0x%02x", byte(v&0x7f))
	}
	if err := t.layout(); err != nil {
		return nil, r.Fail("%v", err)
	}
	if t.nest > maxTypeDepth {
		return nil, r.Fail("value type nests more than %d levels deep", maxTypeDepth)
	}
	if t.parts > maxTypeParts {
		return nil, r.Fail("value type has more than %d parts counted as a tree (each use of a type counts again), agenthost's limit", maxTypeParts)
	}
	if err := uniqueLabels(t); err != nil {
		return nil, r.Fail("%s", err)
	}
	return t, nil
}

// uniqueLabels refuses a record, variant, enum or flags with two fields,
// cases or labels of one name: a value of it could not be told apart in
// JSON.
func uniqueLabels(t *Type) error {
	var names []string
	for _, f := range t.Fields {
		names = append(names, f.Name)
	}
	for _, c := range t.Cases {
		names = append(names, c.Name)
	}
	names = append(names, t.Names...)
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("%s has two labels %q", t.Kind, n)
		}
		seen[n] = true
	}
	return nil
}

// parseFields reads a vector of labelled value types: a record's fields,
// a function's parameters.
func parseFields(r *reader, sc *scope) ([]Field, error) {
	var fs []Field
	_, err := r.Vec(func() error {
		l, err := r.Name()
		if err != nil {
			return err
		}
		t, err := parseValType(r, sc)
		fs = append(fs, Field{l, t})
		return err
	})
	return fs, err
}

// valTypes reads value types one after another into dst, each with read
// (parseValType, or optValType for an optional one).
func valTypes(r *reader, sc *scope, read func(*reader, *scope) (*Type, error), dst ...**Type) error {
	for _, d := range dst {
		t, err := read(r, sc)
		if err != nil {
			return err
		}
		*d = t
	}
	return nil
}

func optValType(r *reader, sc *scope) (*Type, error) {
	b, err := r.Byte()
	if err != nil {
		return nil, err
	}
	switch b {
	case 0x00:
		return nil, nil
	case 0x01:
		return parseValType(r, sc)
	}
	return nil, r.Fail("bad optional type 0x%02x", b)
}

// parseDecls reads the declarations of an instance type (or, with
// imports, a component type) in a new scope nested in parent.
func parseDecls(r *reader, parent *scope, imports bool) (*instType, error) {
	sc := newScope(parent)
	if sc.depth > maxScopes {
		return nil, r.Fail("types declared inside types nest more than %d levels deep", maxScopes)
	}
	it := &instType{exports: map[string]extern{}, imports: map[string]extern{}, res: map[string]*Resource{}}
	if _, err := r.Vec(func() error {
		tag, err := r.Byte()
		if err != nil {
			return err
		}
		switch tag {
		case 0x00:
			if err := skipCoreType(r); err != nil {
				return err
			}
		case 0x01:
			td, err := parseDefType(r, sc, false)
			if err != nil {
				return err
			}
			if td.res != nil {
				return r.Fail("resource type defined inside a type")
			}
			sc.types = append(sc.types, td)
		case 0x02:
			s, _, err := readSort(r)
			if err != nil {
				return err
			}
			target, err := r.Byte()
			if err != nil {
				return err
			}
			switch target {
			case 0x02:
				ct, err := r.U32()
				if err != nil {
					return err
				}
				idx, err := r.U32()
				if err != nil {
					return err
				}
				if s == sortType {
					td, err := outerType(r, sc, ct, idx)
					if err != nil {
						return err
					}
					sc.types = append(sc.types, td)
				}
			default:
				return shapeError("an export alias inside a type declaration")
			}
		case 0x03, 0x04:
			if tag == 0x03 && !imports {
				return r.Fail("import declaration in an instance type")
			}
			name, err := externName(r)
			if err != nil {
				return err
			}
			e, err := parseExtern(r, sc)
			if err != nil {
				return err
			}
			if e.sort == sortType {
				if e.typ.res != nil && e.typ.res.Key == "" {
					it.res[name] = e.typ.res
				}
				sc.types = append(sc.types, e.typ)
			}
			if tag == 0x03 {
				it.imports[name] = e
			} else {
				it.exports[name] = e
				it.names = append(it.names, name)
			}
		default:
			return r.Fail("unknown declaration 0x%02x", tag)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return it, nil
}

// skipCoreType reads past a core:type (a function type or a module type).
func skipCoreType(r *reader) error {
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	switch tag {
	case 0x60:
		for range 2 { // parameter and result types
			if _, err := r.ByteVec(); err != nil {
				return err
			}
		}
		return nil
	case 0x50:
		return shapeError("core module types (module imports) are not supported")
	}
	return shapeError("core type 0x%02x is not supported", tag)
}

// splitVersion splits "wasi:io/streams@0.2.3" into "wasi:io/streams" and
// "0.2.3".
func splitVersion(name string) (string, string) {
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}
