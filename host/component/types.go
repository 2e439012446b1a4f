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

func (f *FuncType) String() string {
	var b strings.Builder
	b.WriteString("func(")
	for i, p := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name + ": " + p.Type.String())
	}
	b.WriteString(")")
	if f.Result != nil {
		b.WriteString(" -> " + f.Result.String())
	}
	return b.String()
}

// String renders the type in WIT syntax.
func (t *Type) String() string {
	switch t.Kind {
	case List:
		return "list<" + t.Elem.String() + ">"
	case FixedList:
		return fmt.Sprintf("list<%s, %d>", t.Elem, t.Len)
	case Option:
		return "option<" + t.Elem.String() + ">"
	case Map:
		return "map<" + t.Elem.String() + ", " + t.Val.String() + ">"
	case Result:
		switch {
		case t.Ok == nil && t.Err == nil:
			return "result"
		case t.Err == nil:
			return "result<" + t.Ok.String() + ">"
		case t.Ok == nil:
			return "result<_, " + t.Err.String() + ">"
		}
		return "result<" + t.Ok.String() + ", " + t.Err.String() + ">"
	case Tuple:
		parts := make([]string, len(t.Items))
		for i, it := range t.Items {
			parts[i] = it.String()
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case Record:
		if t.Name != "" {
			return t.Name
		}
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ": " + f.Type.String()
		}
		return "record { " + strings.Join(parts, ", ") + " }"
	case Variant:
		if t.Name != "" {
			return t.Name
		}
		parts := make([]string, len(t.Cases))
		for i, c := range t.Cases {
			parts[i] = c.Name
			if c.Type != nil {
				parts[i] += "(" + c.Type.String() + ")"
			}
		}
		return "variant { " + strings.Join(parts, ", ") + " }"
	case Enum, Flags:
		if t.Name != "" {
			return t.Name
		}
		return t.Kind.String() + " { " + strings.Join(t.Names, ", ") + " }"
	case Own, Borrow:
		return t.Kind.String() + "<" + t.Resource.Key + ">"
	case Stream, Future:
		if t.Elem == nil {
			return t.Kind.String()
		}
		return t.Kind.String() + "<" + t.Elem.String() + ">"
	}
	return t.Kind.String()
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

// depth returns how deeply t nests.
func (t *Type) depth() int {
	d := 0
	for _, c := range t.children() {
		if cd := c.depth(); cd > d {
			d = cd
		}
	}
	return d + 1
}

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

// layout computes size, alignment and flattening; children are already
// laid out (types are built bottom-up).
func (t *Type) layout() error {
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
		var s, a uint32 = 0, 1
		for _, m := range t.members() {
			s = alignTo(s, m.align)
			s += m.size
			a = max(a, m.align)
			t.flat = append(t.flat, m.flat...)
		}
		t.size, t.align = alignTo(s, a), a
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

// supported reports, for a type in an exported function's signature,
// what makes it unusable as a tool's argument or result ("" if nothing).
func (t *Type) unsupported() string {
	switch t.Kind {
	case Own, Borrow:
		return "a resource handle (" + t.String() + ")"
	case Stream, Future:
		return "a " + t.Kind.String()
	case ErrorContext:
		return "an error-context"
	case FixedList:
		return "a fixed-length list"
	case Map:
		return "a map"
	}
	for _, c := range t.children() {
		if s := c.unsupported(); s != "" {
			return s
		}
	}
	return ""
}
