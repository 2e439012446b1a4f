package componenttest

import "fmt"

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
		prev := leb(uint64(i - 1))
		switch shape {
		case "result":
			types = append(types, 0x6a, 0x01)
			types = append(types, prev...)
			types = append(types, 0x01)
			types = append(types, prev...)
		case "variant":
			types = append(types, 0x71)
			types = append(types, leb(uint64(width))...)
			for c := range width {
				types = append(types, name(fmt.Sprintf("c%d", c))...)
				types = append(types, 0x01)
				types = append(types, prev...)
				types = append(types, 0x00)
			}
		case "record":
			types = append(types, 0x72)
			types = append(types, leb(uint64(width))...)
			for c := range width {
				types = append(types, name(fmt.Sprintf("f%d", c))...)
				types = append(types, prev...)
			}
		case "tuple":
			types = append(types, 0x6f)
			types = append(types, leb(uint64(width))...)
			for range width {
				types = append(types, prev...)
			}
		}
	}
	top := leb(uint64(levels))
	// t0, tuple<u8>, is a defined type so that each level names the one
	// below by its index.
	t0 := []byte{0x6f, 0x01, 0x7d}
	fn := []byte{0x40, 0x01}
	fn = append(fn, name("x")...)
	fn = append(fn, top...)
	fn = append(fn, 0x00)
	fn = append(fn, top...)
	typeSec := append(leb(uint64(levels+2)), t0...)
	typeSec = append(typeSec, types...)
	typeSec = append(typeSec, fn...)

	b := []byte("\x00asm\x0d\x00\x01\x00")
	b = appendSection(b, 1, coreModule(flat))
	b = appendSection(b, 2, []byte{0x01, 0x00, 0x00, 0x00}) // (core instance (instantiate 0))
	var aliases []byte
	aliases = append(aliases, 0x03)
	aliases = append(aliases, 0x00, 0x02, 0x01, 0x00) // core memory of core instance 0
	aliases = append(aliases, name("memory")...)
	aliases = append(aliases, 0x00, 0x00, 0x01, 0x00) // core func
	aliases = append(aliases, name("realloc")...)
	aliases = append(aliases, 0x00, 0x00, 0x01, 0x00)
	aliases = append(aliases, name("f")...)
	b = appendSection(b, 6, aliases)
	b = appendSection(b, 7, typeSec)
	// (func (canon lift (core func 1) (memory 0) (realloc 0) (type levels+1)))
	canon := []byte{0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x00, 0x04, 0x00}
	canon = append(canon, leb(uint64(levels+1))...)
	b = appendSection(b, 8, canon)
	exp := []byte{0x01, 0x00}
	exp = append(exp, name("f")...)
	exp = append(exp, 0x01, 0x00, 0x00) // func 0, no type ascription
	b = appendSection(b, 11, exp)
	return b
}

// coreModule is a core module exporting memory, realloc (returning 8)
// and f, which takes nparams i32s and returns an i32 (0: the result is
// all zeros in memory).
func coreModule(nparams int) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	f := []byte{0x60}
	f = append(f, leb(uint64(nparams))...)
	for range nparams {
		f = append(f, 0x7f)
	}
	f = append(f, 0x01, 0x7f)
	typ := append([]byte{0x02}, f...)
	typ = append(typ, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f)
	m = appendSection(m, 1, typ)
	m = appendSection(m, 3, []byte{0x02, 0x00, 0x01})
	m = appendSection(m, 5, []byte{0x01, 0x00, 0x01}) // one memory, one page
	var exp []byte
	exp = append(exp, 0x03)
	exp = append(exp, name("memory")...)
	exp = append(exp, 0x02, 0x00)
	exp = append(exp, name("f")...)
	exp = append(exp, 0x00, 0x00)
	exp = append(exp, name("realloc")...)
	exp = append(exp, 0x00, 0x01)
	m = appendSection(m, 7, exp)
	body := func(v byte) []byte { return []byte{0x04, 0x00, 0x41, v, 0x0b} } // i32.const v
	code := append([]byte{0x02}, body(0)...)
	code = append(code, body(8)...)
	return appendSection(m, 10, code)
}

func appendSection(b []byte, id byte, data []byte) []byte {
	b = append(b, id)
	b = append(b, leb(uint64(len(data)))...)
	return append(b, data...)
}

func name(s string) []byte { return append(leb(uint64(len(s))), s...) }

func leb(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}
