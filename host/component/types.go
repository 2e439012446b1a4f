package component

import (
	"fmt"
	"strings"
)

// Kind is the kind of a component value type.
type Kind uint8

// The value types of the component model. Option, result, enum and tuple
// are kept apart from variant and record (their JSON differs); the
// canonical ABI treats them as their despecialised forms.
const (
	Bool Kind = iota + 1
	S8
	U8
	S16
	U16
	S32
	U32
	S64
	U64
	F32
	F64
	Char
	String
	List
	Record
	Tuple
	Variant
	Enum
	Option
	Result
	Flags
	Own
	Borrow
	// Kinds parsed but outside what a tool's signature may use.
	Stream
	Future
	ErrorContext
	FixedList
	Map
)

var kindNames = [...]string{
	Bool: "bool", S8: "s8", U8: "u8", S16: "s16", U16: "u16", S32: "s32", U32: "u32",
	S64: "s64", U64: "u64", F32: "f32", F64: "f64", Char: "char", String: "string",
	List: "list", Record: "record", Tuple: "tuple", Variant: "variant", Enum: "enum",
	Option: "option", Result: "result", Flags: "flags", Own: "own", Borrow: "borrow",
	Stream: "stream", Future: "future", ErrorContext: "error-context", FixedList: "list",
	Map: "map",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Type is a component value type. Types are immutable once loaded; their
// canonical ABI layout is computed when they are made.
type Type struct {
	Kind Kind
	// Elem is the element of a list or fixed list, the payload of an
	// option, the key of a map (Val is the value).
	Elem *Type
	Val  *Type
	// Len is the length of a fixed list.
	Len uint32
	// Fields are a record's fields.
	Fields []Field
	// Items are a tuple's members.
	Items []*Type
	// Cases are a variant's cases (Type nil: no payload).
	Cases []Case
	// Names are the labels of an enum or flags.
	Names []string
	// Ok and Err are a result's payloads (nil: none).
	Ok, Err *Type
	// Resource is the resource of an own or borrow handle.
	Resource *Resource
	// Name is the name the type was exported under, if any, for messages.
	Name string

	size, align uint32
	flat        []coreType
	// payOff is the offset of a variant's payload from its start.
	payOff uint32

	// What every use of the type needs to know, worked out once when the
	// type is made (layout), from its children's: a type may use another
	// many times over, so walking its tree for these would take time
	// exponential in its size in the binary.
	nest  int    // how deeply it nests: 1 without children
	parts uint32 // its parts counted as a tree (parts), at most maxTypeParts+1
	bulk  bool   // values live in memory: strings, lists, maps
	unsup string // what makes it unusable for a tool, "" if nothing
}

// Field is a record field.
type Field struct {
	Name string
	Type *Type
}

// Case is a variant case.
type Case struct {
	Name string
	Type *Type // nil: no payload
}

// Resource is an abstract resource type. Key identifies a resource the
// host implements: the interface without its version and the resource
// name, like "wasi:io/streams#output-stream".
type Resource struct {
	Key string
}

// FuncType is a component function type.
type FuncType struct {
	Params []Field
	Result *Type // nil: no result
	Async  bool
}

// String renders the function type in WIT syntax, cut to maxTypeText
// bytes.
func (f *FuncType) String() string {
	w := typeText{max: maxTypeText}
	w.fields("func(", f.Params, ")")
	if f.Result != nil {
		w.put(" -> ")
		w.typ(f.Result)
	}
	return w.String()
}

// String renders the type in WIT syntax, cut to maxTypeText bytes (it is
// for messages; a type using another many times over would be long).
func (t *Type) String() string {
	w := typeText{max: maxTypeText}
	w.typ(t)
	return w.String()
}

// maxTypeText bounds a type written in a message.
const maxTypeText = 512

// typeText writes types in WIT syntax, stopping once it has written max
// bytes: the work is bounded by max, however large the type's tree.
type typeText struct {
	b   strings.Builder
	max int
}

func (w *typeText) full() bool { return w.b.Len() >= w.max }

func (w *typeText) put(s string) {
	if !w.full() {
		w.b.WriteString(s)
	}
}

// list writes open, the n items (item(i) writes one) separated by commas,
// then close.
func (w *typeText) list(open string, n int, item func(i int), close string) {
	w.put(open)
	for i := range n {
		if i > 0 {
			w.put(", ")
		}
		item(i)
	}
	w.put(close)
}

// wrap writes t between open and close.
func (w *typeText) wrap(open string, t *Type, close string) {
	w.put(open)
	w.typ(t)
	w.put(close)
}

// fields writes a record's fields or a function's parameters: name: type.
func (w *typeText) fields(open string, fs []Field, close string) {
	w.list(open, len(fs), func(i int) {
		w.put(fs[i].Name + ": ")
		w.typ(fs[i].Type)
	}, close)
}

func (w *typeText) String() string {
	if s := w.b.String(); len(s) > w.max {
		return strings.ToValidUTF8(s[:w.max], "") + "…"
	}
	return w.b.String()
}

func (w *typeText) typ(t *Type) {
	if w.full() {
		return
	}
	switch t.Kind {
	case List, Option:
		w.wrap(t.Kind.String()+"<", t.Elem, ">")
	case FixedList:
		w.put("list<")
		w.typ(t.Elem)
		w.put(fmt.Sprintf(", %d>", t.Len))
	case Map:
		w.put("map<")
		w.typ(t.Elem)
		w.wrap(", ", t.Val, ">")
	case Result:
		switch {
		case t.Ok == nil && t.Err == nil:
			w.put("result")
		case t.Err == nil:
			w.wrap("result<", t.Ok, ">")
		case t.Ok == nil:
			w.wrap("result<_, ", t.Err, ">")
		default:
			w.put("result<")
			w.typ(t.Ok)
			w.wrap(", ", t.Err, ">")
		}
	case Tuple:
		w.list("tuple<", len(t.Items), func(i int) { w.typ(t.Items[i]) }, ">")
	case Record:
		if t.Name != "" {
			w.put(t.Name)
			return
		}
		w.fields("record { ", t.Fields, " }")
	case Variant:
		if t.Name != "" {
			w.put(t.Name)
			return
		}
		w.list("variant { ", len(t.Cases), func(i int) {
			w.put(t.Cases[i].Name)
			if c := t.Cases[i].Type; c != nil {
				w.wrap("(", c, ")")
			}
		}, " }")
	case Enum, Flags:
		if t.Name != "" {
			w.put(t.Name)
			return
		}
		w.list(t.Kind.String()+" { ", len(t.Names), func(i int) { w.put(t.Names[i]) }, " }")
	case Own, Borrow:
		w.put(t.Kind.String() + "<" + t.Resource.Key + ">")
	case Stream, Future:
		w.put(t.Kind.String())
		if t.Elem != nil {
			w.wrap("<", t.Elem, ">")
		}
	default:
		w.put(t.Kind.String())
	}
}

// coreType is a core WebAssembly value type in a flattened signature.
type coreType byte

const (
	i32 coreType = 0x7f
	i64 coreType = 0x7e
	f32 coreType = 0x7d
	f64 coreType = 0x7c
)

// Canonical ABI limits on flattened signatures.
const (
	maxFlatParams  = 16
	maxFlatResults = 1
)

// maxTypeDepth bounds how deeply value types nest, so that recursion over
// a hostile type stays shallow.
const maxTypeDepth = 64

// maxTypeParts bounds a value type's parts counted as a tree, each use of
// a type counted again (a type, a field, a case, a label each count one):
// t = result<u, u> with u = result<v, v> has the parts of v four times.
// What is rendered from a type (its text, its JSON Schema, a value of it)
// grows with its parts, not with its size in the binary, so this keeps
// each bounded. wasmtime has a like limit ("effective type size"), of
// the same number.
const maxTypeParts = 1_000_000

func (t *Type) children() []*Type {
	var out []*Type
	add := func(c *Type) {
		if c != nil {
			out = append(out, c)
		}
	}
	add(t.Elem)
	add(t.Val)
	add(t.Ok)
	add(t.Err)
	for _, f := range t.Fields {
		add(f.Type)
	}
	out = append(out, t.Items...)
	for _, c := range t.Cases {
		add(c.Type)
	}
	return out
}

// layout computes size, alignment and flattening, and the facts every use
// of the type needs (nest, parts, bulk, unsup), from its children's:
// children are laid out already (types are built bottom-up), so each type
// is worked out once, in time linear in its own fields.
func (t *Type) layout() error {
	t.facts()
	switch t.Kind {
	case Bool, S8, U8:
		t.size, t.align, t.flat = 1, 1, []coreType{i32}
	case S16, U16:
		t.size, t.align, t.flat = 2, 2, []coreType{i32}
	case S32, U32, Char, Own, Borrow, Stream, Future, ErrorContext:
		t.size, t.align, t.flat = 4, 4, []coreType{i32}
	case F32:
		t.size, t.align, t.flat = 4, 4, []coreType{f32}
	case S64, U64:
		t.size, t.align, t.flat = 8, 8, []coreType{i64}
	case F64:
		t.size, t.align, t.flat = 8, 8, []coreType{f64}
	case String, List, Map:
		t.size, t.align, t.flat = 8, 4, []coreType{i32, i32}
	case FixedList:
		if uint64(t.Len)*uint64(t.Elem.size) >= 1<<28 {
			return fmt.Errorf("fixed-length list of %d elements is too large", t.Len)
		}
		t.size, t.align = t.Len*t.Elem.size, t.Elem.align
		if uint64(t.Len)*uint64(len(t.Elem.flat)) <= maxFlatParams {
			for range t.Len {
				t.flat = append(t.flat, t.Elem.flat...)
			}
		} else {
			t.flat = make([]coreType, maxFlatParams+1) // never flat
		}
	case Record, Tuple:
		var s uint64
		var a uint32 = 1
		for _, m := range t.members() {
			s = alignTo64(s, m.align)
			s += uint64(m.size)
			a = max(a, m.align)
			if s >= 1<<28 {
				return fmt.Errorf("type %s is too large", t)
			}
			// A longer list is never flat; its length is all that
			// counts, and members may repeat one another's many times.
			if len(t.flat) <= maxFlatParams {
				t.flat = append(t.flat, m.flat...)
			}
		}
		t.size, t.align = uint32(alignTo64(s, a)), a
		if len(t.flat) > maxFlatParams {
			t.flat = t.flat[:maxFlatParams+1]
		}
	case Variant, Option, Result, Enum:
		cases := t.caseTypes()
		ds := discriminantSize(len(cases))
		var ma uint32 = 1
		var cs uint32
		var flat []coreType
		for _, c := range cases {
			if c == nil {
				continue
			}
			ma = max(ma, c.align)
			cs = max(cs, c.size)
			for i, ft := range c.flat {
				if i < len(flat) {
					flat[i] = join(flat[i], ft)
				} else {
					flat = append(flat, ft)
				}
			}
		}
		a := max(ds, ma)
		t.payOff = alignTo(ds, ma)
		s := t.payOff + cs
		t.size, t.align = alignTo(s, a), a
		t.flat = append([]coreType{i32}, flat...)
	case Flags:
		switch n := len(t.Names); {
		case n <= 8:
			t.size, t.align = 1, 1
		case n <= 16:
			t.size, t.align = 2, 2
		default:
			t.size, t.align = 4, 4
		}
		t.flat = []coreType{i32}
	default:
		return fmt.Errorf("unknown type kind %d", t.Kind)
	}
	if t.size >= 1<<28 {
		return fmt.Errorf("type %s is too large", t)
	}
	return nil
}

// members are the laid-out parts of a record or tuple.
func (t *Type) members() []*Type {
	if t.Kind == Tuple {
		return t.Items
	}
	out := make([]*Type, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.Type
	}
	return out
}

// caseTypes are the payload types of a variant-like type's cases.
func (t *Type) caseTypes() []*Type {
	switch t.Kind {
	case Option:
		return []*Type{nil, t.Elem}
	case Result:
		return []*Type{t.Ok, t.Err}
	case Enum:
		return make([]*Type, len(t.Names))
	}
	out := make([]*Type, len(t.Cases))
	for i, c := range t.Cases {
		out[i] = c.Type
	}
	return out
}

// caseName names case i of a variant-like type.
func (t *Type) caseName(i int) string {
	switch t.Kind {
	case Option:
		return [...]string{"none", "some"}[i]
	case Result:
		return [...]string{"ok", "err"}[i]
	case Enum:
		return t.Names[i]
	}
	return t.Cases[i].Name
}

func discriminantSize(n int) uint32 {
	switch {
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

func join(a, b coreType) coreType {
	if a == b {
		return a
	}
	if (a == i32 && b == f32) || (a == f32 && b == i32) {
		return i32
	}
	return i64
}

func alignTo(n, a uint32) uint32 { return (n + a - 1) / a * a }

func alignTo64(n uint64, a uint32) uint64 { return (n + uint64(a) - 1) / uint64(a) * uint64(a) }

// flattenParams is the core parameter list of a function lifted or
// lowered with type ft, and whether the parameters travel in memory.
func flattenParams(ft *FuncType) (flat []coreType, spilled bool) {
	for _, p := range ft.Params {
		flat = append(flat, p.Type.flat...)
	}
	if len(flat) > maxFlatParams {
		return []coreType{i32}, true
	}
	return flat, false
}

// flattenResults is the core result list of a function type, and whether
// the result travels in memory.
func flattenResults(ft *FuncType) (flat []coreType, spilled bool) {
	if ft.Result == nil {
		return nil, false
	}
	if len(ft.Result.flat) > maxFlatResults {
		return []coreType{i32}, true
	}
	return ft.Result.flat, false
}

// paramsTuple is the tuple the spilled parameters of ft are stored as.
func paramsTuple(ft *FuncType) *Type {
	t := &Type{Kind: Tuple}
	for _, p := range ft.Params {
		t.Items = append(t.Items, p.Type)
	}
	_ = t.layout()
	return t
}

// unsupported reports, for a type in an exported function's signature,
// what makes it unusable as a tool's argument or result ("" if nothing).
func (t *Type) unsupported() string { return t.unsup }

// facts works out nest, parts, bulk and unsup from the children's.
func (t *Type) facts() {
	t.nest, t.parts, t.bulk, t.unsup = 1, 1+uint32(len(t.Names)), false, ""
	switch t.Kind {
	case String, List, Map:
		t.bulk = true
	}
	switch t.Kind {
	case Own, Borrow:
		t.unsup = "a resource handle (" + t.String() + ")"
	case Stream, Future:
		t.unsup = "a " + t.Kind.String()
	case ErrorContext:
		t.unsup = "an error-context"
	case FixedList:
		t.unsup = "a fixed-length list"
	case Map:
		t.unsup = "a map"
	}
	for _, c := range t.Cases {
		if c.Type == nil {
			t.parts++ // the case's label
		}
	}
	for _, c := range t.children() {
		t.nest = max(t.nest, c.nest+1)
		t.parts = min(t.parts+c.parts, maxTypeParts+1)
		t.bulk = t.bulk || c.bulk
		if t.unsup == "" {
			t.unsup = c.unsup
		}
	}
}
