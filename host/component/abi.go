package component

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Value is a component value on the host side:
//
//	bool                     bool
//	s8, s16, s32, s64        int64
//	u8, u16, u32, u64        uint64
//	f32, f64                 float32, float64
//	char                     rune
//	string                   string
//	list<u8>                 []byte
//	other lists              []Value
//	record, tuple            []Value (in field order)
//	variant, option, result  Var (option: case 0 none, 1 some; result: 0 ok, 1 err)
//	enum                     uint32 (the case's index)
//	flags                    uint32 (bit i set: flag i)
//	own, borrow              the host object the handle stands for
type Value = any

// Var is a variant value: the case's index and its payload (nil: none).
type Var struct {
	Case uint32
	Val  Value
}

// Trap is the error a call ends with when the guest breaks the canonical
// ABI's rules (a bad pointer, an invalid string, a bogus handle, ...) or
// calls an import agenthost does not provide.
type Trap struct{ Msg string }

func (t *Trap) Error() string { return t.Msg }

func trap(format string, args ...any) { panic(&Trap{fmt.Sprintf(format, args...)}) }

// abi moves values across one canonical ABI boundary: the memory, realloc
// and string encoding of a lift or lower.
type abi struct {
	ctx     context.Context
	st      *call
	mem     api.Memory
	realloc api.Function
	enc     byte
	// what names the crossing in a refusal of the call's budget ("the
	// result of f", "the arguments of wasi:http/types#...").
	what string
	// held is what this crossing has charged to the call's budget; the
	// caller gives it back once the host lets go of the values.
	held uint64
}

// Costs charged to the call's budget (hostmem) for the host's side of a
// lifted value, beside the bytes of its strings and byte lists: each
// element of a list (its slot and the boxed value), each field of a
// record or tuple (its slot).
const (
	elemCost  = 32
	fieldCost = 16
)

// charge takes n bytes of the call's budget for a copy the host is about
// to make; past the budget the call fails (a *hostmem.Error).
func (a *abi) charge(n uint64) {
	if err := a.st.budget.Charge(n, a.what); err != nil {
		panic(err)
	}
	a.held += n
}

// release gives back what the crossing charged.
func (a *abi) release() {
	a.st.budget.Release(a.held)
	a.held = 0
}

func (a *abi) needMem() api.Memory {
	if a.mem == nil {
		trap("the canonical ABI needs a memory here, and the lift or lower has none")
	}
	return a.mem
}

// readIn returns v, read from memory at p, and traps when the read was
// out of bounds (!ok).
func readIn[T any](v T, ok bool, p uint32) T {
	if !ok {
		trap("read at %d is out of bounds", p)
	}
	return v
}

// wroteIn traps when a write at p was out of bounds (!ok).
func wroteIn(ok bool, p uint32) {
	if !ok {
		trap("write at %d is out of bounds", p)
	}
}

func (a *abi) u8(p uint32) uint8 {
	v, ok := a.needMem().ReadByte(p)
	return readIn(v, ok, p)
}

func (a *abi) u16(p uint32) uint16 {
	v, ok := a.needMem().ReadUint16Le(p)
	return readIn(v, ok, p)
}

func (a *abi) u32(p uint32) uint32 {
	v, ok := a.needMem().ReadUint32Le(p)
	return readIn(v, ok, p)
}

func (a *abi) u64(p uint32) uint64 {
	v, ok := a.needMem().ReadUint64Le(p)
	return readIn(v, ok, p)
}

func (a *abi) bytes(p, n uint32) []byte {
	b, ok := a.needMem().Read(p, n)
	if !ok {
		trap("%d bytes at %d are out of bounds", n, p)
	}
	return b
}

func (a *abi) put8(p uint32, v uint8) { wroteIn(a.needMem().WriteByte(p, v), p) }

func (a *abi) put16(p uint32, v uint16) { wroteIn(a.needMem().WriteUint16Le(p, v), p) }

func (a *abi) put32(p uint32, v uint32) { wroteIn(a.needMem().WriteUint32Le(p, v), p) }

func (a *abi) put64(p uint32, v uint64) { wroteIn(a.needMem().WriteUint64Le(p, v), p) }

func checkPtr(a *abi, p, align, size uint32) {
	if p%align != 0 {
		trap("pointer %d is not aligned to %d", p, align)
	}
	if uint64(p)+uint64(size) > uint64(a.needMem().Size()) {
		trap("%d bytes at %d are out of bounds", size, p)
	}
}

// alloc calls the guest's realloc for a new block.
func (a *abi) alloc(align, size uint32) uint32 {
	if a.realloc == nil {
		trap("the canonical ABI needs realloc here, and the lift or lower has none")
	}
	a.charge(uint64(size))
	res, err := a.realloc.Call(a.ctx, 0, 0, uint64(align), uint64(size))
	if err != nil {
		panic(err)
	}
	p := uint32(res[0])
	checkPtr(a, p, align, size)
	return p
}

func validChar(c uint32) rune {
	if c >= 0x110000 || (c >= 0xd800 && c <= 0xdfff) {
		trap("%#x is not a Unicode scalar value", c)
	}
	return rune(c)
}

// load reads a value of type t at p.
func (a *abi) load(p uint32, t *Type) Value {
	switch t.Kind {
	case Bool:
		return a.u8(p) != 0
	case S8:
		return int64(int8(a.u8(p)))
	case U8:
		return uint64(a.u8(p))
	case S16:
		return int64(int16(a.u16(p)))
	case U16:
		return uint64(a.u16(p))
	case S32:
		return int64(int32(a.u32(p)))
	case U32:
		return uint64(a.u32(p))
	case S64:
		return int64(a.u64(p))
	case U64:
		return a.u64(p)
	case F32:
		return math.Float32frombits(a.u32(p))
	case F64:
		return math.Float64frombits(a.u64(p))
	case Char:
		return validChar(a.u32(p))
	case String:
		return a.loadString(a.u32(p), a.u32(p+4))
	case List:
		return a.loadList(a.u32(p), a.u32(p+4), t.Elem)
	case Record, Tuple:
		ms := t.members()
		a.charge(uint64(len(ms)) * fieldCost)
		out := make([]Value, len(ms))
		off := uint32(0)
		for i, m := range ms {
			off = alignTo(off, m.align)
			out[i] = a.load(p+off, m)
			off += m.size
		}
		return out
	case Variant, Option, Result, Enum:
		cases := t.caseTypes()
		var d uint32
		switch discriminantSize(len(cases)) {
		case 1:
			d = uint32(a.u8(p))
		case 2:
			d = uint32(a.u16(p))
		default:
			d = a.u32(p)
		}
		if int(d) >= len(cases) {
			trap("case %d of %s is out of range", d, t)
		}
		if t.Kind == Enum {
			return d
		}
		var v Value
		if ct := cases[d]; ct != nil {
			v = a.load(p+t.payOff, ct)
		}
		return Var{d, v}
	case Flags:
		var v uint32
		switch t.size {
		case 1:
			v = uint32(a.u8(p))
		case 2:
			v = uint32(a.u16(p))
		default:
			v = a.u32(p)
		}
		return v & flagMask(t)
	case Own, Borrow:
		return a.st.liftHandle(a.u32(p), t)
	}
	trap("values of type %s cannot be read", t)
	return nil
}

func flagMask(t *Type) uint32 {
	if len(t.Names) == 32 {
		return math.MaxUint32
	}
	return 1<<len(t.Names) - 1
}

const utf16Tag = 1 << 31

// loadString copies a string out of the guest's memory, charging its
// UTF-8 bytes to the call's budget before it is copied.
func (a *abi) loadString(p, units uint32) string {
	switch a.enc {
	case 1: // utf16
		return a.loadUTF16(p, units)
	case 2: // latin1+utf16
		if units&utf16Tag != 0 {
			return a.loadUTF16(p, units&^utf16Tag)
		}
		if p%2 != 0 {
			trap("string pointer %d is not aligned to 2", p)
		}
		b := a.bytes(p, units)
		n := len(b)
		for _, c := range b {
			if c >= 0x80 {
				n++
			}
		}
		a.charge(uint64(n))
		var sb strings.Builder
		sb.Grow(n)
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return sb.String()
	}
	b := a.bytes(p, units)
	if !utf8.Valid(b) {
		trap("string at %d is not valid UTF-8", p)
	}
	a.charge(uint64(len(b)))
	return string(b)
}

func (a *abi) loadUTF16(p, units uint32) string {
	if p%2 != 0 {
		trap("string pointer %d is not aligned to 2", p)
	}
	if uint64(units)*2 > math.MaxUint32 {
		trap("string of %d code units is too long", units)
	}
	b := a.bytes(p, units*2)
	unit := func(i int) uint16 { return uint16(b[2*i]) | uint16(b[2*i+1])<<8 }
	// One pass checks the surrogates and counts the UTF-8 bytes, so that
	// the budget is charged before the string is built.
	n := 0
	for i := 0; i < int(units); i++ {
		switch u := unit(i); {
		case u >= 0xd800 && u <= 0xdfff:
			if u >= 0xdc00 || i+1 >= int(units) || unit(i+1) < 0xdc00 || unit(i+1) > 0xdfff {
				trap("string at %d is not valid UTF-16", p)
			}
			n += 4
			i++
		default:
			n += utf8.RuneLen(rune(u))
		}
	}
	a.charge(uint64(n))
	var sb strings.Builder
	sb.Grow(n)
	for i := 0; i < int(units); i++ {
		r := rune(unit(i))
		if r >= 0xd800 && r <= 0xdfff {
			r = utf16.DecodeRune(r, rune(unit(i+1)))
			i++
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func (a *abi) loadList(p, n uint32, elem *Type) Value {
	if p%elem.align != 0 {
		trap("list pointer %d is not aligned to %d", p, elem.align)
	}
	if uint64(n)*uint64(elem.size) > uint64(a.needMem().Size()) {
		trap("list of %d elements at %d is out of bounds", n, p)
	}
	if elem.Kind == U8 {
		b := a.bytes(p, n)
		a.charge(uint64(n))
		return append([]byte(nil), b...)
	}
	checkPtr(a, p, elem.align, n*elem.size)
	a.charge(uint64(n) * elemCost)
	out := make([]Value, n)
	for i := range n {
		out[i] = a.load(p+i*elem.size, elem)
	}
	return out
}

// store writes v, of type t, at p.
func (a *abi) store(p uint32, t *Type, v Value) {
	switch t.Kind {
	case Bool:
		var b uint8
		if asBool(v, t) {
			b = 1
		}
		a.put8(p, b)
	case S8, U8:
		a.put8(p, uint8(asBits(v, t)))
	case S16, U16:
		a.put16(p, uint16(asBits(v, t)))
	case S32, U32:
		a.put32(p, uint32(asBits(v, t)))
	case S64, U64:
		a.put64(p, asBits(v, t))
	case F32:
		a.put32(p, uint32(asBits(v, t)))
	case F64:
		a.put64(p, asBits(v, t))
	case Char:
		a.put32(p, uint32(asBits(v, t)))
	case String:
		ptr, n := a.storeString(asString(v, t))
		a.put32(p, ptr)
		a.put32(p+4, n)
	case List:
		ptr, n := a.storeList(v, t)
		a.put32(p, ptr)
		a.put32(p+4, n)
	case Record, Tuple:
		ms := t.members()
		vs := asTuple(v, t, len(ms))
		off := uint32(0)
		for i, m := range ms {
			off = alignTo(off, m.align)
			a.store(p+off, m, vs[i])
			off += m.size
		}
	case Variant, Option, Result, Enum:
		cases := t.caseTypes()
		d, pay := asVar(v, t, len(cases))
		switch discriminantSize(len(cases)) {
		case 1:
			a.put8(p, uint8(d))
		case 2:
			a.put16(p, uint16(d))
		default:
			a.put32(p, d)
		}
		if ct := cases[d]; ct != nil {
			a.store(p+t.payOff, ct, pay)
		}
	case Flags:
		f := asFlags(v, t)
		switch t.size {
		case 1:
			a.put8(p, uint8(f))
		case 2:
			a.put16(p, uint16(f))
		default:
			a.put32(p, f)
		}
	case Own, Borrow:
		a.put32(p, a.st.lowerHandle(v, t))
	default:
		trap("values of type %s cannot be written", t)
	}
}

func (a *abi) storeString(s string) (uint32, uint32) {
	if len(s) > math.MaxInt32 {
		trap("string of %d bytes is too long", len(s))
	}
	switch a.enc {
	case 1, 2:
		// Encoded straight into the guest's memory: the host makes no
		// copy of its own.
		latin1 := a.enc == 2
		units := 0
		for _, r := range s {
			if r > 0xff {
				latin1 = false
			}
			units++
			if r >= 0x10000 {
				units++
			}
		}
		if latin1 {
			p := a.alloc(2, uint32(units))
			b := a.bytes(p, uint32(units))
			i := 0
			for _, r := range s {
				b[i] = byte(r)
				i++
			}
			return p, uint32(units)
		}
		p := a.alloc(2, uint32(2*units))
		b := a.bytes(p, uint32(2*units))
		i := 0
		put := func(u rune) { b[i], b[i+1] = byte(u), byte(u>>8); i += 2 }
		for _, r := range s {
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				put(r1)
				put(r2)
			} else {
				put(r)
			}
		}
		n := uint32(units)
		if a.enc == 2 {
			n |= utf16Tag
		}
		return p, n
	}
	p := a.alloc(1, uint32(len(s)))
	copy(a.bytes(p, uint32(len(s))), s)
	return p, uint32(len(s))
}

func (a *abi) storeList(v Value, t *Type) (uint32, uint32) {
	elem := t.Elem
	if b, ok := v.([]byte); ok && elem.Kind == U8 {
		p := a.alloc(1, uint32(len(b)))
		copy(a.bytes(p, uint32(len(b))), b)
		return p, uint32(len(b))
	}
	vs, ok := v.([]Value)
	if !ok {
		hostBug("a %s value is %T", t, v)
	}
	size := uint64(len(vs)) * uint64(elem.size)
	if size > math.MaxUint32 {
		trap("list of %d elements is too large", len(vs))
	}
	p := a.alloc(elem.align, uint32(size))
	for i, e := range vs {
		a.store(p+uint32(i)*elem.size, elem, e)
	}
	return p, uint32(len(vs))
}

// liftFlat reads a value of type t from flat core values, returning it
// and how many values it took (len(t.flat)).
func (a *abi) liftFlat(vals []uint64, t *Type) Value {
	if len(vals) < len(t.flat) {
		trap("too few core values for %s", t)
	}
	v := vals[0]
	switch t.Kind {
	case Bool:
		return uint32(v) != 0
	case S8:
		return int64(int8(v))
	case U8:
		return uint64(uint8(v))
	case S16:
		return int64(int16(v))
	case U16:
		return uint64(uint16(v))
	case S32:
		return int64(int32(v))
	case U32:
		return uint64(uint32(v))
	case S64:
		return int64(v)
	case U64:
		return v
	case F32:
		return math.Float32frombits(uint32(v))
	case F64:
		return math.Float64frombits(v)
	case Char:
		return validChar(uint32(v))
	case String:
		return a.loadString(uint32(v), uint32(vals[1]))
	case List:
		return a.loadList(uint32(v), uint32(vals[1]), t.Elem)
	case Record, Tuple:
		ms := t.members()
		a.charge(uint64(len(ms)) * fieldCost)
		out := make([]Value, len(ms))
		i := 0
		for j, m := range ms {
			out[j] = a.liftFlat(vals[i:], m)
			i += len(m.flat)
		}
		return out
	case Variant, Option, Result, Enum:
		cases := t.caseTypes()
		d := uint32(v)
		if int(d) >= len(cases) {
			trap("case %d of %s is out of range", d, t)
		}
		if t.Kind == Enum {
			return d
		}
		var pay Value
		if ct := cases[d]; ct != nil {
			pay = a.liftFlat(vals[1:], ct)
		}
		return Var{d, pay}
	case Flags:
		return uint32(v) & flagMask(t)
	case Own, Borrow:
		return a.st.liftHandle(uint32(v), t)
	}
	trap("values of type %s cannot be lifted", t)
	return nil
}

// lowerFlat appends the flat core values of v, of type t, to out.
func (a *abi) lowerFlat(out []uint64, t *Type, v Value) []uint64 {
	switch t.Kind {
	case Bool:
		if asBool(v, t) {
			return append(out, 1)
		}
		return append(out, 0)
	case S8, U8, S16, U16, S32, U32, Char, F32:
		b := asBits(v, t)
		switch t.Kind {
		case S8:
			b = uint64(uint8(b))
		case S16:
			b = uint64(uint16(b))
		}
		return append(out, uint64(uint32(b)))
	case S64, U64, F64:
		return append(out, asBits(v, t))
	case String:
		p, n := a.storeString(asString(v, t))
		return append(out, uint64(p), uint64(n))
	case List:
		p, n := a.storeList(v, t)
		return append(out, uint64(p), uint64(n))
	case Record, Tuple:
		ms := t.members()
		vs := asTuple(v, t, len(ms))
		for i, m := range ms {
			out = a.lowerFlat(out, m, vs[i])
		}
		return out
	case Variant, Option, Result, Enum:
		cases := t.caseTypes()
		d, pay := asVar(v, t, len(cases))
		start := len(out)
		out = append(out, uint64(d))
		if ct := cases[d]; ct != nil {
			out = a.lowerFlat(out, ct, pay)
		}
		for len(out)-start < len(t.flat) {
			out = append(out, 0)
		}
		return out
	case Flags:
		return append(out, uint64(asFlags(v, t)))
	case Own, Borrow:
		return append(out, uint64(a.st.lowerHandle(v, t)))
	}
	trap("values of type %s cannot be lowered", t)
	return nil
}

// hostError is a bug on the host side: a value that does not fit its
// type. It fails the call rather than the process.
type hostError struct{ msg string }

func (e *hostError) Error() string { return "agenthost: " + e.msg }

func hostBug(format string, args ...any) { panic(&hostError{fmt.Sprintf(format, args...)}) }

func asBool(v Value, t *Type) bool {
	b, ok := v.(bool)
	if !ok {
		hostBug("a %s value is %T", t, v)
	}
	return b
}

// asBits returns the bits of a number or char in its core representation.
func asBits(v Value, t *Type) uint64 {
	switch x := v.(type) {
	case int64:
		return uint64(x)
	case uint64:
		return x
	case rune:
		return uint64(uint32(x))
	case float32:
		return uint64(math.Float32bits(canonNaN32(x)))
	case float64:
		return math.Float64bits(canonNaN64(x))
	}
	hostBug("a %s value is %T", t, v)
	return 0
}

func canonNaN32(f float32) float32 {
	if f != f {
		return math.Float32frombits(0x7fc00000)
	}
	return f
}

func canonNaN64(f float64) float64 {
	if f != f {
		return math.Float64frombits(0x7ff8000000000000)
	}
	return f
}

func asString(v Value, t *Type) string {
	s, ok := v.(string)
	if !ok {
		hostBug("a %s value is %T", t, v)
	}
	return s
}

func asTuple(v Value, t *Type, n int) []Value {
	vs, ok := v.([]Value)
	if !ok || len(vs) != n {
		hostBug("a %s value is %T of length %d", t, v, len(vs))
	}
	return vs
}

func asVar(v Value, t *Type, n int) (uint32, Value) {
	if t.Kind == Enum {
		d, ok := v.(uint32)
		if !ok || int(d) >= n {
			hostBug("a %s value is %T %v", t, v, v)
		}
		return d, nil
	}
	x, ok := v.(Var)
	if !ok || int(x.Case) >= n {
		hostBug("a %s value is %T %v", t, v, v)
	}
	if t.caseTypes()[x.Case] == nil {
		return x.Case, nil
	}
	return x.Case, x.Val
}

func asFlags(v Value, t *Type) uint32 {
	f, ok := v.(uint32)
	if !ok {
		hostBug("a %s value is %T", t, v)
	}
	return f & flagMask(t)
}
