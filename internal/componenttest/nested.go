package componenttest

import (
	"fmt"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// Nested writes a component, in the binary format, whose one export "f"
// takes and returns a value type built in levels: t0 is tuple<u8> and each level
// refers to the one below it width times, so the type is small in the
// binary but its expansion as a tree has about width^levels parts.
//
//	"result"   t(i) = result<t(i-1), t(i-1)> (width is 2)
//	"variant"  t(i) = variant { c0(t(i-1)), ..., c<width-1>(t(i-1)) }
//	"record"   t(i) = record { f0: t(i-1), ..., f<width-1>: t(i-1) }
//	"tuple"    t(i) = tuple<t(i-1), ...> (width members)
//
// The component is otherwise well-formed (a core module with memory and
// realloc, the canon lift, the export), so that what a host makes of it
// is the types' doing. The core function's signature follows the
// canonical ABI's flattening of func(x: t) -> t.
func Nested(shape string, levels, width int) []byte {
	if shape == "result" {
		width = 2
	}
	// Core parameters of the lifted function: the flattening of t, or
	// one pointer when it has more than 16 values.
	flat := 1
	for range levels {
		switch shape {
		case "result", "variant":
			flat++ // the discriminant, then the cases' joined values
		case "record", "tuple":
			flat *= width
		default:
			panic(fmt.Sprintf("componenttest.Nested: unknown shape %q", shape))
		}
		flat = min(flat, 17)
	}
	if flat > 16 {
		flat = 1
	}

	var types []byte
	for i := 1; i <= levels; i++ {
		prev := wasmbin.AppendUleb32(nil, uint32(i-1))
		switch shape {
		case "result":
			types = append(types, 0x6a, 0x01)
			types = append(types, prev...)
			types = append(types, 0x01)
			types = append(types, prev...)
		case "variant":
			types = append(types, 0x71)
			types = wasmbin.AppendUleb32(types, uint32(width))
			for c := range width {
				types = wasmbin.AppendName(types, fmt.Sprintf("c%d", c))
				types = append(types, 0x01)
				types = append(types, prev...)
				types = append(types, 0x00)
			}
		case "record":
			types = append(types, 0x72)
			types = wasmbin.AppendUleb32(types, uint32(width))
			for c := range width {
				types = wasmbin.AppendName(types, fmt.Sprintf("f%d", c))
				types = append(types, prev...)
			}
		case "tuple":
			types = append(types, 0x6f)
			types = wasmbin.AppendUleb32(types, uint32(width))
			for range width {
				types = append(types, prev...)
			}
		}
	}
	top := wasmbin.AppendUleb32(nil, uint32(levels))
	// t0, tuple<u8>, is a defined type so that each level names the one
	// below by its index.
	t0 := []byte{0x6f, 0x01, 0x7d}
	fn := []byte{0x40, 0x01}
	fn = wasmbin.AppendName(fn, "x")
	fn = append(fn, top...)
	fn = append(fn, 0x00)
	fn = append(fn, top...)
	typeSec := append(wasmbin.AppendUleb32(nil, uint32(levels+2)), t0...)
	typeSec = append(typeSec, types...)
	typeSec = append(typeSec, fn...)

	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = wasmbin.AppendSection(b, 1, coreModule(flat))
	b = wasmbin.AppendSection(b, 2, []byte{0x01, 0x00, 0x00, 0x00}) // (core instance (instantiate 0))
	var aliases []byte
	aliases = append(aliases, 0x03)
	aliases = append(aliases, 0x00, 0x02, 0x01, 0x00) // core memory of core instance 0
	aliases = wasmbin.AppendName(aliases, "memory")
	aliases = append(aliases, 0x00, 0x00, 0x01, 0x00) // core func
	aliases = wasmbin.AppendName(aliases, "realloc")
	aliases = append(aliases, 0x00, 0x00, 0x01, 0x00)
	aliases = wasmbin.AppendName(aliases, "f")
	b = wasmbin.AppendSection(b, 6, aliases)
	b = wasmbin.AppendSection(b, 7, typeSec)
	// (func (canon lift (core func 1) (memory 0) (realloc 0) (type levels+1)))
	canon := []byte{0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x00, 0x04, 0x00}
	canon = wasmbin.AppendUleb32(canon, uint32(levels+1))
	b = wasmbin.AppendSection(b, 8, canon)
	exp := []byte{0x01, 0x00}
	exp = wasmbin.AppendName(exp, "f")
	exp = append(exp, 0x01, 0x00, 0x00) // func 0, no type ascription
	b = wasmbin.AppendSection(b, 11, exp)
	return b
}

// coreModule is a core module exporting memory, realloc (returning 8)
// and f, which takes nparams i32s and returns an i32 (0: the result is
// all zeros in memory).
func coreModule(nparams int) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	f := []byte{0x60}
	f = wasmbin.AppendUleb32(f, uint32(nparams))
	for range nparams {
		f = append(f, 0x7f)
	}
	f = append(f, 0x01, 0x7f)
	typ := append([]byte{0x02}, f...)
	typ = append(typ, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f)
	m = wasmbin.AppendSection(m, 1, typ)
	m = wasmbin.AppendSection(m, 3, []byte{0x02, 0x00, 0x01})
	m = wasmbin.AppendSection(m, 5, []byte{0x01, 0x00, 0x01}) // one memory, one page
	var exp []byte
	exp = append(exp, 0x03)
	exp = wasmbin.AppendName(exp, "memory")
	exp = append(exp, 0x02, 0x00)
	exp = wasmbin.AppendName(exp, "f")
	exp = append(exp, 0x00, 0x00)
	exp = wasmbin.AppendName(exp, "realloc")
	exp = append(exp, 0x00, 0x01)
	m = wasmbin.AppendSection(m, 7, exp)
	body := func(v byte) []byte { return []byte{0x04, 0x00, 0x41, v, 0x0b} } // i32.const v
	code := append([]byte{0x02}, body(0)...)
	code = append(code, body(8)...)
	return wasmbin.AppendSection(m, 10, code)
}
