package component

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/jsonscan"
)

// The JSON mapping of component values is Wassette's (component2json), so
// that a component behaves the same in both hosts:
//
//	bool                    true / false
//	integers, floats        numbers (floats: NaN, inf and -inf as strings)
//	char, string            strings (a char is one code point)
//	list<T>, tuple<...>     arrays
//	record                  object with every field
//	variant                 {"tag": "case", "val": payload} ("val" only with a payload)
//	enum                    the case's name
//	option<T>               null or the value
//	result<T, E>            {"ok": value} or {"err": value} (null without a payload)
//	flags                   array of the names of the flags set
//
// A result is wrapped as {"result": value}.

// decodeArgs turns a tool call's JSON arguments into the function's
// parameters.
func decodeArgs(ft *FuncType, args []byte) ([]Value, error) {
	var obj map[string]any
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) != 0 && !bytes.Equal(trimmed, []byte("null")) {
		v, err := jsonscan.DecodeOne(bytes.NewReader(trimmed))
		if err == jsonscan.ErrMore {
			return nil, errors.New("arguments have data after the JSON object")
		} else if err != nil {
			return nil, fmt.Errorf("arguments are not JSON: %v", err)
		}
		var ok bool
		if obj, ok = v.(map[string]any); !ok {
			return nil, fmt.Errorf("arguments must be a JSON object, not %s", jsonKind(v))
		}
	}
	out := make([]Value, len(ft.Params))
	for i, p := range ft.Params {
		v, ok := obj[p.Name]
		if !ok {
			if p.Type.Kind == Option {
				out[i] = Var{0, nil}
				continue
			}
			return nil, fmt.Errorf("missing argument %q (%s)", p.Name, p.Type)
		}
		x, err := fromJSON(v, p.Type, &jsonPath{key: p.Name})
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func mismatch(path *jsonPath, t *Type, want string, v any) error {
	return fmt.Errorf("%s: %s needs %s, not %s", path, t, want, jsonKind(v))
}

var intRange = map[Kind][2]*big.Int{}

func init() {
	for k, bits := range map[Kind]uint{S8: 8, S16: 16, S32: 32, S64: 64} {
		lo := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))
		hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))
		intRange[k] = [2]*big.Int{lo, hi}
	}
	for k, bits := range map[Kind]uint{U8: 8, U16: 16, U32: 32, U64: 64} {
		hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))
		intRange[k] = [2]*big.Int{big.NewInt(0), hi}
	}
}

// parseInt reads an integer of kind k from a JSON number: an integer
// literal, or a number whose value is a whole number (1e3, 2.0).
func parseInt(n json.Number, t *Type, path *jsonPath) (Value, error) {
	s := string(n)
	if len(s) > 400 {
		return nil, fmt.Errorf("%s: number %.20s... is too long", path, s)
	}
	z, ok := new(big.Int).SetString(s, 10)
	if !ok {
		f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if err != nil || !f.IsInt() || f.IsInf() {
			return nil, fmt.Errorf("%s: %s needs a whole number, not %s", path, t, s)
		}
		if f.MantExp(nil) > 80 {
			return nil, fmt.Errorf("%s: %s is out of the range of %s", path, s, t)
		}
		z, _ = f.Int(nil)
	}
	r := intRange[t.Kind]
	if z.Cmp(r[0]) < 0 || z.Cmp(r[1]) > 0 {
		return nil, fmt.Errorf("%s: %s is out of the range of %s (%s to %s)", path, s, t, r[0], r[1])
	}
	switch t.Kind {
	case S8, S16, S32, S64:
		return z.Int64(), nil
	}
	return z.Uint64(), nil
}

func fromJSON(v any, t *Type, path *jsonPath) (Value, error) {
	switch t.Kind {
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, mismatch(path, t, "true or false", v)
		}
		return b, nil
	case S8, S16, S32, S64, U8, U16, U32, U64:
		n, ok := v.(json.Number)
		if !ok {
			return nil, mismatch(path, t, "a number", v)
		}
		return parseInt(n, t, path)
	case F32, F64:
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("%s: %q is not a number", path, x)
			}
		case string:
			switch x {
			case "NaN":
				f = math.NaN()
			case "inf":
				f = math.Inf(1)
			case "-inf":
				f = math.Inf(-1)
			default:
				return nil, fmt.Errorf("%s: %s needs a number (or \"NaN\", \"inf\", \"-inf\"), not %q", path, t, x)
			}
		default:
			return nil, mismatch(path, t, "a number", v)
		}
		if t.Kind == F32 {
			return float32(f), nil
		}
		return f, nil
	case Char:
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) != 1 {
			return nil, fmt.Errorf("%s: char needs a string of exactly one character", path)
		}
		r, _ := utf8.DecodeRuneInString(s)
		return r, nil
	case String:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch(path, t, "a string", v)
		}
		return s, nil
	case List:
		arr, ok := v.([]any)
		if !ok {
			return nil, mismatch(path, t, "an array", v)
		}
		if t.Elem.Kind == U8 {
			b := make([]byte, len(arr))
			for i, e := range arr {
				x, err := fromJSON(e, t.Elem, path.index(i))
				if err != nil {
					return nil, err
				}
				b[i] = byte(x.(uint64))
			}
			return b, nil
		}
		out := make([]Value, len(arr))
		for i, e := range arr {
			x, err := fromJSON(e, t.Elem, path.index(i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case Tuple:
		arr, ok := v.([]any)
		if !ok {
			return nil, mismatch(path, t, "an array", v)
		}
		if len(arr) != len(t.Items) {
			return nil, fmt.Errorf("%s: %s needs an array of %d items, not %d", path, t, len(t.Items), len(arr))
		}
		out := make([]Value, len(arr))
		for i, e := range arr {
			x, err := fromJSON(e, t.Items[i], path.index(i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case Record:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(path, t, "an object", v)
		}
		out := make([]Value, len(t.Fields))
		for i, f := range t.Fields {
			fv, ok := obj[f.Name]
			if !ok {
				if f.Type.Kind == Option {
					out[i] = Var{0, nil}
					continue
				}
				return nil, fmt.Errorf("%s: missing field %q (%s)", path, f.Name, f.Type)
			}
			x, err := fromJSON(fv, f.Type, path.field(f.Name))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case Variant:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(path, t, `an object {"tag": case, "val": payload}`, v)
		}
		tag, ok := obj["tag"].(string)
		if !ok {
			return nil, fmt.Errorf("%s: variant needs a \"tag\" naming its case", path)
		}
		for i, c := range t.Cases {
			if c.Name != tag {
				continue
			}
			if c.Type == nil {
				return Var{uint32(i), nil}, nil
			}
			pv, ok := obj["val"]
			if !ok {
				return nil, fmt.Errorf("%s: case %q needs its payload in \"val\"", path, tag)
			}
			x, err := fromJSON(pv, c.Type, path.field("val"))
			if err != nil {
				return nil, err
			}
			return Var{uint32(i), x}, nil
		}
		return nil, fmt.Errorf("%s: %q is not a case of %s (cases: %s)", path, tag, t, nameList(caseNames(t)))
	case Enum:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch(path, t, "a string", v)
		}
		for i, n := range t.Names {
			if n == s {
				return uint32(i), nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not one of %s", path, s, nameList(t.Names))
	case Option:
		if v == nil {
			return Var{0, nil}, nil
		}
		x, err := fromJSON(v, t.Elem, path)
		if err != nil {
			return nil, err
		}
		return Var{1, x}, nil
	case Result:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(path, t, `an object {"ok": value} or {"err": value}`, v)
		}
		for i, key := range []string{"ok", "err"} {
			pv, ok := obj[key]
			if !ok {
				continue
			}
			pt := t.caseTypes()[i]
			if pt == nil {
				return Var{uint32(i), nil}, nil
			}
			x, err := fromJSON(pv, pt, path.field(key))
			if err != nil {
				return nil, err
			}
			return Var{uint32(i), x}, nil
		}
		return nil, fmt.Errorf("%s: result needs an \"ok\" or an \"err\" key", path)
	case Flags:
		var set uint32
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				i := indexOf(t.Names, s)
				if !ok || i < 0 {
					return nil, fmt.Errorf("%s: %v is not a flag of %s (flags: %s)", path, e, t, nameList(t.Names))
				}
				set |= 1 << i
			}
		case map[string]any:
			for k, e := range x {
				i := indexOf(t.Names, k)
				b, ok := e.(bool)
				if i < 0 || !ok {
					return nil, fmt.Errorf("%s: %q is not a flag of %s (flags: %s)", path, k, t, nameList(t.Names))
				}
				if b {
					set |= 1 << i
				}
			}
		default:
			return nil, mismatch(path, t, "an array of flag names", v)
		}
		return set, nil
	}
	return nil, fmt.Errorf("%s: %s cannot be given as JSON", path, t)
}

// jsonPath is where a value is in a call's arguments, for messages: the
// parameter's name, then ".field" or "[index]" for each level. It is
// written out only for a message (labels may be long, and a path written
// for each of many values would cost their length each time).
type jsonPath struct {
	up  *jsonPath
	key string
	idx int // when key is ""
}

func (p *jsonPath) field(name string) *jsonPath { return &jsonPath{up: p, key: name} }
func (p *jsonPath) index(i int) *jsonPath       { return &jsonPath{up: p, idx: i} }

// String writes the path, cut to maxTypeText bytes.
func (p *jsonPath) String() string {
	var parts []*jsonPath
	for q := p; q != nil; q = q.up {
		parts = append(parts, q)
	}
	w := typeText{max: maxTypeText}
	for i := len(parts) - 1; i >= 0; i-- {
		switch q := parts[i]; {
		case i == len(parts)-1:
			w.put(q.key)
		case q.key != "":
			w.put("." + q.key)
		default:
			w.put("[" + strconv.Itoa(q.idx) + "]")
		}
	}
	return w.String()
}

// nameList joins the names of cases, labels or flags for a message, cut
// to maxTypeText bytes.
func nameList(names []string) string {
	w := typeText{max: maxTypeText}
	for i, n := range names {
		if w.full() {
			break
		}
		if i > 0 {
			w.put(", ")
		}
		w.put(n)
	}
	return w.String()
}

func indexOf(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

func caseNames(t *Type) []string {
	out := make([]string, len(t.Cases))
	for i, c := range t.Cases {
		out[i] = c.Name
	}
	return out
}

var errResultTooLarge = errors.New("result too large")

// encodeResult renders {"result": v}, failing once it exceeds max bytes.
func encodeResult(t *Type, v Value, max int) ([]byte, error) {
	e := &encoder{max: max}
	e.b = append(e.b, `{"result":`...)
	e.value(t, v)
	e.b = append(e.b, '}')
	if e.over() {
		return nil, fmt.Errorf("%w: the result's JSON is larger than %d bytes", errResultTooLarge, max)
	}
	return e.b, nil
}

type encoder struct {
	b   []byte
	max int
}

func (e *encoder) over() bool { return len(e.b) > e.max }

func (e *encoder) value(t *Type, v Value) {
	if e.over() {
		return
	}
	switch t.Kind {
	case Bool:
		e.b = strconv.AppendBool(e.b, asBool(v, t))
	case S8, S16, S32, S64:
		e.b = strconv.AppendInt(e.b, v.(int64), 10)
	case U8, U16, U32, U64:
		e.b = strconv.AppendUint(e.b, v.(uint64), 10)
	case F32:
		e.float(float64(v.(float32)), 32)
	case F64:
		e.float(v.(float64), 64)
	case Char:
		e.str(string(v.(rune)))
	case String:
		e.str(asString(v, t))
	case List:
		e.b = append(e.b, '[')
		if b, ok := v.([]byte); ok {
			for i, c := range b {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.b = strconv.AppendUint(e.b, uint64(c), 10)
				if e.over() {
					return
				}
			}
		} else {
			for i, x := range v.([]Value) {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.value(t.Elem, x)
				if e.over() {
					return
				}
			}
		}
		e.b = append(e.b, ']')
	case Tuple:
		e.b = append(e.b, '[')
		for i, x := range asTuple(v, t, len(t.Items)) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.value(t.Items[i], x)
		}
		e.b = append(e.b, ']')
	case Record:
		e.b = append(e.b, '{')
		for i, x := range asTuple(v, t, len(t.Fields)) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(t.Fields[i].Name)
			e.b = append(e.b, ':')
			e.value(t.Fields[i].Type, x)
		}
		e.b = append(e.b, '}')
	case Variant:
		d, pay := asVar(v, t, len(t.Cases))
		e.b = append(e.b, `{"tag":`...)
		e.str(t.Cases[d].Name)
		if ct := t.Cases[d].Type; ct != nil {
			e.b = append(e.b, `,"val":`...)
			e.value(ct, pay)
		}
		e.b = append(e.b, '}')
	case Enum:
		d, _ := asVar(v, t, len(t.Names))
		e.str(t.Names[d])
	case Option:
		d, pay := asVar(v, t, 2)
		if d == 0 {
			e.b = append(e.b, "null"...)
		} else {
			e.value(t.Elem, pay)
		}
	case Result:
		d, pay := asVar(v, t, 2)
		e.b = append(e.b, `{"`...)
		e.b = append(e.b, t.caseName(int(d))...)
		e.b = append(e.b, `":`...)
		if ct := t.caseTypes()[d]; ct != nil {
			e.value(ct, pay)
		} else {
			e.b = append(e.b, "null"...)
		}
		e.b = append(e.b, '}')
	case Flags:
		f := asFlags(v, t)
		e.b = append(e.b, '[')
		first := true
		for i, n := range t.Names {
			if f&(1<<i) == 0 {
				continue
			}
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			e.str(n)
		}
		e.b = append(e.b, ']')
	default:
		hostBug("a %s cannot be written as JSON", t)
	}
}

func (e *encoder) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		e.b = append(e.b, `"NaN"`...)
	case math.IsInf(f, 1):
		e.b = append(e.b, `"inf"`...)
	case math.IsInf(f, -1):
		e.b = append(e.b, `"-inf"`...)
	default:
		// As encoding/json writes numbers.
		abs := math.Abs(f)
		fmtc := byte('f')
		if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
			fmtc = 'e'
		}
		e.b = strconv.AppendFloat(e.b, f, fmtc, -1, bits)
	}
}

func (e *encoder) str(s string) {
	e.b = append(e.b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			e.b = append(e.b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				e.b = append(e.b, '\\', c)
			case '\n':
				e.b = append(e.b, '\\', 'n')
			case '\r':
				e.b = append(e.b, '\\', 'r')
			case '\t':
				e.b = append(e.b, '\\', 't')
			default:
				e.b = fmt.Appendf(e.b, `\u%04x`, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.b = append(e.b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			e.b = fmt.Appendf(e.b, `\u%04x`, r)
		} else {
			e.b = append(e.b, s[i:i+size]...)
		}
		i += size
	}
	e.b = append(e.b, '"')
}

// Tool is an exported function described for a model: its name, a
// description and JSON Schemas of its arguments and result, as Wassette's
// component2json makes them.
type Tool struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // nil for a function without a result
}

// Tools describes every exported function. Its schemas were rendered at
// load; the slice is the caller's, the schemas are shared and must not be
// changed.
func (k *Component) Tools() []Tool {
	out := make([]Tool, 0, len(k.funcs))
	for _, f := range k.funcs {
		out = append(out, f.tool)
	}
	return out
}

// Tool describes the function.
func (f *Func) Tool() Tool { return f.tool }

// maxSchemaBytes bounds the JSON Schemas of all of a component's tools
// together. A type that uses another many times over is written out in
// full at each use, so a small binary can describe a schema of
// gigabytes; a model is sent every tool's schema with each request, and
// a megabyte is far beyond what it can use.
const maxSchemaBytes = 1 << 20

// describe renders each function's Tool, the schemas of all together
// within maxSchemaBytes.
func (k *Component) describe() error {
	w := &schemaWriter{max: maxSchemaBytes}
	for _, f := range k.funcs {
		t := Tool{Name: f.Name, Description: f.Doc}
		if t.Description == "" {
			t.Description = fmt.Sprintf("Auto-generated schema for function '%s'", f.Name)
		}
		start := len(w.b)
		w.object(f.Type.Params)
		t.InputSchema = w.b[start:len(w.b):len(w.b)]
		if f.Type.Result != nil {
			start = len(w.b)
			w.put(`{"properties":{"result":`)
			w.schema(f.Type.Result)
			w.put(`},"required":["result"],"type":"object"}`)
			t.OutputSchema = w.b[start:len(w.b):len(w.b)]
		}
		if w.over() {
			return fmt.Errorf("export %q: the JSON Schemas of the component's tools come to more than %d bytes, agenthost's limit (a type that uses another many times over is written out at each use)", joinName(f.Interface, f.Function), maxSchemaBytes)
		}
		f.tool = t
	}
	return nil
}

// schemaWriter writes JSON Schemas of types as Wassette's component2json
// makes them, byte for byte as encoding/json would write its maps (keys
// sorted), into one buffer of at most max bytes: past it, it stops, so
// the work is bounded by max however large a type's tree.
type schemaWriter struct {
	b   []byte
	max int
}

func (w *schemaWriter) over() bool { return len(w.b) > w.max }

func (w *schemaWriter) put(s string) {
	if !w.over() {
		w.b = append(w.b, s...)
	}
}

// str writes a JSON string as encoding/json does (HTML characters
// escaped).
func (w *schemaWriter) str(s string) {
	if w.over() {
		return
	}
	b, _ := json.Marshal(s)
	w.b = append(w.b, b...)
}

func (w *schemaWriter) strs(names []string) {
	w.put("[")
	for i, n := range names {
		if i > 0 {
			w.put(",")
		}
		w.str(n)
	}
	w.put("]")
}

// schema writes the JSON Schema of a type.
func (w *schemaWriter) schema(t *Type) {
	if w.over() {
		return
	}
	switch t.Kind {
	case Bool:
		w.put(`{"type":"boolean"}`)
	case S8, S16, S32, S64, U8, U16, U32, U64:
		w.put(`{"type":"number"}`)
	case F32, F64: // NaN and the infinities have no JSON number: strings (fromJSON)
		w.put(`{"anyOf":[{"type":"number"},{"enum":["NaN","inf","-inf"]}]}`)
	case Char:
		w.put(`{"description":"1 unicode codepoint","type":"string"}`)
	case String:
		w.put(`{"type":"string"}`)
	case List:
		w.put(`{"items":`)
		w.schema(t.Elem)
		w.put(`,"type":"array"}`)
	case Record:
		w.object(t.Fields)
	case Tuple:
		n := strconv.Itoa(len(t.Items))
		w.put(`{"maxItems":` + n + `,"minItems":` + n + `,"prefixItems":[`)
		for i, it := range t.Items {
			if i > 0 {
				w.put(",")
			}
			w.schema(it)
		}
		w.put(`],"type":"array"}`)
	case Variant:
		w.put(`{"oneOf":[`)
		for i, c := range t.Cases {
			if i > 0 {
				w.put(",")
			}
			w.put(`{"properties":{"tag":{"const":`)
			w.str(c.Name)
			w.put(`}`)
			if c.Type != nil {
				w.put(`,"val":`)
				w.schema(c.Type)
				w.put(`},"required":["tag","val"],"type":"object"}`)
			} else {
				w.put(`},"required":["tag"],"type":"object"}`)
			}
		}
		w.put(`]}`)
	case Enum:
		w.put(`{"enum":`)
		w.strs(t.Names)
		w.put(`,"type":"string"}`)
	case Option:
		w.put(`{"anyOf":[{"type":"null"},`)
		w.schema(t.Elem)
		w.put(`]}`)
	case Result:
		side := func(key string, p *Type) {
			w.put(`{"properties":{"` + key + `":`)
			if p != nil {
				w.schema(p)
			} else {
				w.put(`{"type":"null"}`)
			}
			w.put(`},"required":["` + key + `"],"type":"object"}`)
		}
		w.put(`{"oneOf":[`)
		side("ok", t.Ok)
		w.put(",")
		side("err", t.Err)
		w.put(`]}`)
	case Flags:
		// Wassette's schema says an object of booleans while its values
		// are arrays of names; this schema describes the array, and
		// both forms are accepted.
		w.put(`{"items":{"enum":`)
		w.strs(t.Names)
		w.put(`,"type":"string"},"type":"array","uniqueItems":true}`)
	default:
		w.put(`{}`)
	}
}

// schema is the JSON Schema of a type (for tests), or nil past
// maxSchemaBytes.
func schema(t *Type) json.RawMessage {
	w := &schemaWriter{max: maxSchemaBytes}
	w.schema(t)
	if w.over() {
		return nil
	}
	return w.b
}

// object writes the schema of an object with fields (a record's, a
// function's parameters): properties as encoding/json writes a map, keys
// sorted (names are unique: the parser checks), and every field required,
// in declaration order.
func (w *schemaWriter) object(fields []Field) {
	sorted := slices.Clone(fields)
	slices.SortStableFunc(sorted, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	w.put(`{"properties":{`)
	for i, f := range sorted {
		if i > 0 {
			w.put(",")
		}
		w.str(f.Name)
		w.put(":")
		w.schema(f.Type)
	}
	w.put(`},"required":[`)
	for i, f := range fields {
		if i > 0 {
			w.put(",")
		}
		w.str(f.Name)
	}
	w.put(`],"type":"object"}`)
}
