package component

import (
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// coreModule is what the linker needs to know of a core module: the types
// of what it imports and exports.
type coreModule struct {
	imports []coreImport
	exports map[string]coreItem
	// initialPages and hasMemory describe a memory the module defines.
	hasMemory    bool
	initialPages uint64
	// emptyName replaces the module name "" in imports (see
	// renameEmptyModule).
	emptyName string
}

type coreImport struct {
	module, name string
	item         coreItem
}

// coreItem is the type of an import or export.
type coreItem struct {
	sort   byte // coreSortFunc, ...
	fn     coreSig
	table  []byte // encoded tabletype
	global []byte // encoded globaltype
	mem64  bool
	shared bool
}

type coreSig struct {
	params, results []byte // value type bytes
}

func (s coreSig) String() string {
	name := func(b []byte) string {
		var out []byte
		for i, t := range b {
			if i > 0 {
				out = append(out, ' ')
			}
			switch coreType(t) {
			case i32:
				out = append(out, "i32"...)
			case i64:
				out = append(out, "i64"...)
			case f32:
				out = append(out, "f32"...)
			case f64:
				out = append(out, "f64"...)
			default:
				out = fmt.Appendf(out, "0x%02x", t)
			}
		}
		return string(out)
	}
	return "(" + name(s.params) + ") -> (" + name(s.results) + ")"
}

// parseCoreModule reads the import, export and definition sections of a
// core module.
func parseCoreModule(b []byte, base int) (*coreModule, error) {
	if wasmbin.ReadHeader(b) != wasmbin.HeaderModule {
		return nil, &wasmbin.FormatError{Off: base, Msg: "core module has no valid header"}
	}
	secs, err := wasmbin.Sections(b[8:], base+8)
	if err != nil {
		return nil, err
	}
	m := &coreModule{exports: map[string]coreItem{}}
	var types []coreSig
	var funcs []coreSig
	var tables, globals [][]byte
	var mems []coreItem
	for _, s := range secs {
		// Each section read here is a vector: each reads one element.
		var each func() error
		r := wasmbin.NewReader(s.Data, s.Off)
		switch s.ID {
		case 1: // type
			each = func() error {
				tag, err := r.Byte()
				if err != nil {
					return err
				}
				if tag != 0x60 {
					return shapeError("core module uses type form 0x%02x (GC or recursive types are not supported)", tag)
				}
				var sig coreSig
				for k := range 2 {
					vs, err := r.ByteVec()
					if err != nil {
						return err
					}
					for _, v := range vs {
						switch v {
						case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
						default:
							return shapeError("core module uses value type 0x%02x", v)
						}
					}
					if k == 0 {
						sig.params = vs
					} else {
						sig.results = vs
					}
				}
				types = append(types, sig)
				return nil
			}
		case 2: // import
			each = func() error {
				im, _, err := readCoreImport(r, types)
				if err != nil {
					return err
				}
				m.imports = append(m.imports, im)
				switch it := im.item; it.sort {
				case coreSortFunc:
					funcs = append(funcs, it.fn)
				case coreSortTable:
					tables = append(tables, it.table)
				case coreSortMemory:
					mems = append(mems, it)
				case coreSortGlobal:
					globals = append(globals, it.global)
				}
				return nil
			}
		case 3: // function
			each = func() error {
				ti, err := r.U32()
				if err != nil {
					return err
				}
				if int(ti) >= len(types) {
					return r.Fail("function of missing type %d", ti)
				}
				funcs = append(funcs, types[ti])
				return nil
			}
		case 4: // table
			each = func() error {
				start := r.Pos()
				if err := skipTableType(r); err != nil {
					return err
				}
				tables = append(tables, r.Since(start))
				return nil
			}
		case 5: // memory
			each = func() error {
				mt, min, err := readMemType(r)
				if err != nil {
					return err
				}
				mems = append(mems, mt)
				m.hasMemory, m.initialPages = true, min
				return nil
			}
		case 6: // global
			each = func() error {
				start := r.Pos()
				if _, err := r.Bytes(2); err != nil {
					return err
				}
				gt := r.Since(start)
				if err := skipConstExpr(r); err != nil {
					return err
				}
				globals = append(globals, gt)
				return nil
			}
		case 7: // export
			each = func() error {
				name, kind, idx, err := readCoreExport(r)
				if err != nil {
					return err
				}
				it := coreItem{sort: kind}
				bad := false
				switch kind {
				case coreSortFunc:
					bad = int(idx) >= len(funcs)
					if !bad {
						it.fn = funcs[idx]
					}
				case coreSortTable:
					bad = int(idx) >= len(tables)
					if !bad {
						it.table = tables[idx]
					}
				case coreSortMemory:
					bad = int(idx) >= len(mems)
					if !bad {
						it = mems[idx]
					}
				case coreSortGlobal:
					bad = int(idx) >= len(globals)
					if !bad {
						it.global = globals[idx]
					}
				default:
					bad = true
				}
				if bad {
					return r.Fail("export %q of kind %d refers to missing definition %d", name, kind, idx)
				}
				m.exports[name] = it
				return nil
			}
		default:
			continue
		}
		if _, err := r.Vec(each); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// readCoreImport reads a core import: the module's and the field's names,
// then what is imported (readImportDesc), whose bytes are desc.
func readCoreImport(r *reader, types []coreSig) (im coreImport, desc []byte, err error) {
	if im.module, err = r.Name(); err != nil {
		return im, nil, err
	}
	if im.name, err = r.Name(); err != nil {
		return im, nil, err
	}
	start := r.Pos()
	if im.item, err = readImportDesc(r, types); err != nil {
		return im, nil, err
	}
	return im, r.Since(start), nil
}

// readCoreExport reads a core export, a core module's or a core instance's
// inline one: its name, then the sort and index of what it exports.
func readCoreExport(r *reader) (name string, sort byte, idx uint32, err error) {
	if name, err = r.Name(); err != nil {
		return "", 0, 0, err
	}
	if sort, err = r.Byte(); err != nil {
		return "", 0, 0, err
	}
	idx, err = r.U32()
	return name, sort, idx, err
}

func readImportDesc(r *reader, types []coreSig) (coreItem, error) {
	kind, err := r.Byte()
	if err != nil {
		return coreItem{}, err
	}
	it := coreItem{sort: kind}
	switch kind {
	case coreSortFunc:
		ti, err := r.U32()
		if err != nil {
			return it, err
		}
		if int(ti) >= len(types) {
			return it, r.Fail("import of missing type %d", ti)
		}
		it.fn = types[ti]
	case coreSortTable:
		start := r.Pos()
		if err := skipTableType(r); err != nil {
			return it, err
		}
		it.table = r.Since(start)
	case coreSortMemory:
		mt, _, err := readMemType(r)
		return mt, err
	case coreSortGlobal:
		g, err := r.Bytes(2)
		if err != nil {
			return it, err
		}
		it.global = g
	default:
		return it, shapeError("core import of kind 0x%02x (tags are not supported)", kind)
	}
	return it, nil
}

func skipTableType(r *reader) error {
	rt, err := r.Byte()
	if err != nil {
		return err
	}
	if rt != 0x70 && rt != 0x6f {
		return shapeError("table of reference type 0x%02x", rt)
	}
	_, _, _, err = readLimits(r)
	return err
}

func readLimits(r *reader) (flags byte, min, max uint64, err error) {
	if flags, err = r.Byte(); err != nil {
		return
	}
	var v uint32
	if v, err = r.U32(); err != nil {
		return
	}
	min = uint64(v)
	if flags&1 != 0 {
		if v, err = r.U32(); err != nil {
			return
		}
		max = uint64(v)
	}
	if flags&^3 != 0 {
		err = shapeError("memory or table limits with flags 0x%02x (memory64 is not supported)", flags)
	}
	return
}

func readMemType(r *reader) (coreItem, uint64, error) {
	flags, min, _, err := readLimits(r)
	if err != nil {
		return coreItem{}, 0, err
	}
	return coreItem{sort: coreSortMemory, shared: flags&2 != 0}, min, nil
}

// skipConstExpr reads past a constant expression (up to its end opcode).
func skipConstExpr(r *reader) error {
	for {
		op, err := r.Byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b:
			return nil
		case 0x41, 0x23, 0xd2: // i32.const, global.get, ref.func
			if _, err := r.S33(); err != nil {
				return err
			}
		case 0x42: // i64.const
			for {
				c, err := r.Byte()
				if err != nil {
					return err
				}
				if c&0x80 == 0 {
					break
				}
			}
		case 0x43:
			if _, err := r.Bytes(4); err != nil {
				return err
			}
		case 0x44:
			if _, err := r.Bytes(8); err != nil {
				return err
			}
		case 0xd0: // ref.null t
			if _, err := r.Byte(); err != nil {
				return err
			}
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constant arithmetic
		default:
			return shapeError("constant expression uses opcode 0x%02x", op)
		}
	}
}

// limitMemory returns a copy of the module with the maximum of the memories
// it defines set to limitPages. A module whose initial memory exceeds the
// limit is refused.
func limitMemory(b []byte, limitPages uint32) ([]byte, error) {
	out, err := wasmbin.CapMemories(b, limitPages)
	if e, ok := errors.AsType[*wasmbin.MemoryLimitError](err); ok {
		return nil, fmt.Errorf("%w: the component's memory starts at %d pages (%d MiB), more than the memory limit of %d pages (%d MiB)",
			ErrMemoryLimit, e.Min, e.Min/16, e.Limit, e.Limit/16)
	}
	return out, err
}

// bundleModule encodes a core module that imports each item from the
// module named by its source and exports it under the bundle's name:
// how a core instance made of inline exports becomes a module instance
// wazero can link against.
func bundleModule(items []bundleImport) []byte {
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	// types
	var types []coreSig
	typeIdx := map[string]int{}
	for _, it := range items {
		if it.item.sort != coreSortFunc {
			continue
		}
		k := string(it.item.fn.params) + "|" + string(it.item.fn.results)
		if _, ok := typeIdx[k]; !ok {
			typeIdx[k] = len(types)
			types = append(types, it.item.fn)
		}
	}
	sec := func(id byte, body []byte) { out = wasmbin.AppendSection(out, id, body) }
	body := wasmbin.AppendUleb32(nil, uint32(len(types)))
	for _, t := range types {
		body = append(body, 0x60)
		body = wasmbin.AppendUleb32(body, uint32(len(t.params)))
		body = append(body, t.params...)
		body = wasmbin.AppendUleb32(body, uint32(len(t.results)))
		body = append(body, t.results...)
	}
	sec(1, body)
	body = wasmbin.AppendUleb32(nil, uint32(len(items)))
	counts := map[byte]int{}
	idx := make([]int, len(items))
	for i, it := range items {
		body = wasmbin.AppendName(body, it.module)
		body = wasmbin.AppendName(body, it.field)
		body = append(body, it.item.sort)
		switch it.item.sort {
		case coreSortFunc:
			body = wasmbin.AppendUleb32(body, uint32(typeIdx[string(it.item.fn.params)+"|"+string(it.item.fn.results)]))
		case coreSortTable:
			body = append(body, it.item.table...)
		case coreSortMemory:
			body = append(body, 0x00, 0) // no minimum or maximum: any memory
		case coreSortGlobal:
			body = append(body, it.item.global...)
		}
		idx[i] = counts[it.item.sort]
		counts[it.item.sort]++
	}
	sec(2, body)
	body = wasmbin.AppendUleb32(nil, uint32(len(items)))
	for i, it := range items {
		body = wasmbin.AppendName(body, it.export)
		body = append(body, it.item.sort)
		body = wasmbin.AppendUleb32(body, uint32(idx[i]))
	}
	sec(7, body)
	return out
}

type bundleImport struct {
	module, field, export string
	item                  coreItem
}

// renameEmptyModule returns the module with imports from the module named
// "" renamed to a name it does not otherwise use (wazero refuses empty
// module names; wit-component's fixup module uses one), and that name.
// A module without such imports is returned as it is, with "".
func renameEmptyModule(b []byte, m *coreModule) ([]byte, string, error) {
	used := map[string]bool{}
	empty := false
	for _, im := range m.imports {
		used[im.module] = true
		empty = empty || im.module == ""
	}
	if !empty {
		return b, "", nil
	}
	name := "agenthost:empty"
	for used[name] {
		name += "_"
	}
	secs, err := wasmbin.Sections(b[8:], 8)
	if err != nil {
		return nil, "", err
	}
	out := append([]byte(nil), b[:8]...)
	var types []coreSig
	for _, s := range secs {
		body := s.Data
		switch s.ID {
		case 1:
			// Only counted so that import descriptions can be read.
			r := wasmbin.NewReader(s.Data, s.Off)
			n, err := r.Count()
			if err != nil {
				return nil, "", err
			}
			types = make([]coreSig, n)
		case 2:
			r := wasmbin.NewReader(s.Data, s.Off)
			n, err := r.Count()
			if err != nil {
				return nil, "", err
			}
			body = wasmbin.AppendUleb32(nil, uint32(n))
			for range n {
				im, desc, err := readCoreImport(r, types)
				if err != nil {
					return nil, "", err
				}
				if im.module == "" {
					im.module = name
				}
				body = wasmbin.AppendName(body, im.module)
				body = wasmbin.AppendName(body, im.name)
				body = append(body, desc...)
			}
		}
		out = wasmbin.AppendSection(out, s.ID, body)
	}
	for i := range m.imports {
		if m.imports[i].module == "" {
			m.imports[i].module = name
		}
	}
	return out, name, nil
}
