package main

import (
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// core's JSON decoding without encoding/json, whose reflection would be a
// large part of core.wasm's size (and pull in fmt and reflect). It decodes the request
// envelope and the tools' flat argument structs the way encoding/json does:
// the input is first checked by encoding/json's own scanner (jsonscan.go),
// so syntax errors read the same; then the values are stored with
// encoding/json's rules (keys matched case-insensitively, null leaves a
// field as it was, the first type error is the one reported, decoding goes
// on after it). fastjson.go is the faster path for the common shapes;
// fastjson_test.go compares both against encoding/json.

// jfield is one field of a target struct: its JSON name and where its
// value goes (exactly one pointer is set).
type jfield struct {
	name string
	str  *string
	strp **string
	num  *int
	flag *bool
	raw  *[]byte
}

// jdec decodes a value the scanner has accepted.
type jdec struct {
	data []byte
	i    int
	err  error // the first error, as encoding/json's saveError keeps
}

func (d *jdec) save(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *jdec) ws() {
	for d.i < len(d.data) && isSpace(d.data[d.i]) {
		d.i++
	}
}

// skip returns the (valid) value at the cursor and moves past it.
func (d *jdec) skip() []byte {
	d.ws()
	start := d.i
	switch d.data[d.i] {
	case '"':
		d.skipString()
	case '{', '[':
		depth := 0
		for {
			switch d.data[d.i] {
			case '"':
				d.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			d.i++
			if depth == 0 {
				break
			}
		}
	default: // number or literal
		for d.i < len(d.data) {
			c := d.data[d.i]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				break
			}
			d.i++
		}
	}
	return d.data[start:d.i]
}

func (d *jdec) skipString() {
	d.i++
	for {
		switch d.data[d.i] {
		case '\\':
			d.i += 2
			continue
		case '"':
			d.i++
			return
		}
		d.i++
	}
}

// kindOf names a JSON value by its first byte as encoding/json's type
// errors do.
func kindOf(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// top decodes the value at the cursor into the struct named typ with the
// given fields; strict makes unknown keys errors (DisallowUnknownFields).
func (d *jdec) top(typ string, fields []jfield, strict bool) {
	d.ws()
	switch c := d.data[d.i]; c {
	case 'n':
		d.skip()
	case '{':
		d.object(typ, fields, strict)
	default:
		d.skip()
		d.save(errors.New("json: cannot unmarshal " + kindOf(c) + " into Go value of type main." + typ))
	}
}

func (d *jdec) object(typ string, fields []jfield, strict bool) {
	d.i++ // {
	for {
		d.ws()
		if d.data[d.i] == '}' {
			d.i++
			return
		}
		key, _ := unquoteBytes(d.skip())
		f := findField(fields, key)
		if f == nil && strict {
			d.save(errors.New("json: unknown field " + strconv.Quote(string(key))))
		}
		d.ws()
		d.i++ // :
		if f == nil {
			d.skip()
		} else {
			d.store(typ, f)
		}
		d.ws()
		c := d.data[d.i]
		d.i++
		if c == '}' {
			return
		}
	}
}

// store decodes the value at the cursor into f.
func (d *jdec) store(typ string, f *jfield) {
	d.ws()
	c := d.data[d.i]
	item := d.skip()
	typeErr := func(value, goType string) {
		d.save(errors.New("json: cannot unmarshal " + value + " into Go struct field " + typ + "." + f.name + " of type " + goType))
	}
	switch {
	case f.raw != nil:
		*f.raw = append((*f.raw)[:0], item...)
	case c == 'n':
		if f.strp != nil {
			*f.strp = nil
		}
	case f.str != nil || f.strp != nil:
		if c != '"' {
			typeErr(kindOf(c), "string")
			return
		}
		s, _ := unquoteBytes(item)
		if f.str != nil {
			*f.str = string(s)
		} else {
			v := string(s)
			*f.strp = &v
		}
	case f.num != nil:
		if c != '-' && (c < '0' || c > '9') {
			typeErr(kindOf(c), "int")
			return
		}
		n, err := strconv.ParseInt(string(item), 10, 64)
		if err != nil || int64(int(n)) != n {
			typeErr("number "+string(item), "int")
			return
		}
		*f.num = int(n)
	case f.flag != nil:
		if c != 't' && c != 'f' {
			typeErr(kindOf(c), "bool")
			return
		}
		*f.flag = c == 't'
	}
}

// findField finds key's field as encoding/json does: by exact name, else
// by a case-insensitive match under Unicode simple folding. The names are
// ASCII, so beyond ASCII letters only 'ſ' (U+017F, folds with s) and 'K'
// (U+212A, Kelvin sign, folds with k) can match.
func findField(fields []jfield, key []byte) *jfield {
	for i := range fields {
		if string(key) == fields[i].name {
			return &fields[i]
		}
	}
	for i := range fields {
		if foldEqual(key, fields[i].name) {
			return &fields[i]
		}
	}
	return nil
}

func foldEqual(key []byte, name string) bool {
	j := 0
	for i := 0; i < len(key); {
		if j >= len(name) {
			return false
		}
		r, n := rune(key[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(key[i:])
			switch r {
			case '\u017f':
				r = 's'
			case '\u212a':
				r = 'k'
			default:
				return false
			}
		}
		i += n
		if lower(byte(r)) != lower(name[j]) {
			return false
		}
		j++
	}
	return j == len(name)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// unmarshalRequest is json.Unmarshal(data, req).
func unmarshalRequest(data []byte, req *request) error {
	var scan scanner
	if err := checkValid(data, &scan); err != nil {
		return err
	}
	d := jdec{data: data}
	d.top("request", []jfield{
		{name: "tool", str: &req.Tool},
		{name: "arguments", raw: &req.Arguments},
		{name: "call_id", str: &req.CallID},
	}, false)
	return d.err
}

// argFields lists the fields of one of the tools' argument structs.
func argFields(v any) (typ string, fields []jfield) {
	switch a := v.(type) {
	case *readFileArgs:
		return "readFileArgs", []jfield{{name: "path", str: &a.Path}, {name: "offset", num: &a.Offset}, {name: "limit", num: &a.Limit}}
	case *writeFileArgs:
		return "writeFileArgs", []jfield{{name: "path", str: &a.Path}, {name: "content", strp: &a.Content}}
	case *listDirArgs:
		return "listDirArgs", []jfield{{name: "path", str: &a.Path}, {name: "recursive", flag: &a.Recursive}}
	case *searchArgs:
		return "searchArgs", []jfield{{name: "pattern", str: &a.Pattern}, {name: "path", str: &a.Path},
			{name: "regexp", flag: &a.Regexp}, {name: "case_insensitive", flag: &a.CaseInsensitive}, {name: "max_results", num: &a.MaxResults}}
	case *editArgs:
		return "editArgs", []jfield{{name: "path", str: &a.Path}, {name: "old_string", str: &a.OldString}, {name: "new_string", strp: &a.NewString}}
	}
	panic("argFields: not an argument struct")
}

// decodeStream is what a json.Decoder with DisallowUnknownFields does with
// one Decode of data into v, followed by a More: err is Decode's error,
// more is More's answer.
func decodeStream(data []byte, v any) (more bool, err error) {
	n, err := readValue(data)
	if err != nil {
		return false, err
	}
	typ, fields := argFields(v)
	d := jdec{data: data[:n]}
	d.top(typ, fields, true)
	if d.err != nil {
		return false, d.err
	}
	for _, c := range data[n:] {
		if !isSpace(c) {
			return c != ']' && c != '}', nil
		}
	}
	return false, nil
}

// readValue is the json.Decoder's: the length of the first value of data.
func readValue(data []byte) (int, error) {
	var s scanner
	s.reset()
	for i, c := range data {
		s.bytes++
		switch s.step(&s, c) {
		case scanEnd:
			return i, nil
		case scanEndObject, scanEndArray:
			if stateEndValue(&s, ' ') == scanEnd {
				return i + 1, nil
			}
		case scanError:
			return 0, s.err
		}
	}
	if s.step(&s, ' ') == scanEnd {
		return len(data), nil
	}
	for _, c := range data {
		if !isSpace(c) {
			return 0, io.ErrUnexpectedEOF
		}
	}
	return 0, io.EOF
}

// getu4 and unquoteBytes are encoding/json's (decode.go; Copyright 2010
// The Go Authors, BSD-style license).

func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func unquoteBytes(s []byte) (t []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return
	}
	s = s[1 : len(s)-1]

	// Check for unusual characters. If there are none,
	// then no unquoting is needed, so return a slice of the
	// original bytes.
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}

	b := make([]byte, len(s)+2*utf8.UTFMax)
	w := copy(b, s[0:r])
	for r < len(s) {
		// Out of room? Can only happen if s is full of
		// malformed UTF-8 and we're replacing each
		// byte with RuneError.
		if w >= len(b)-2*utf8.UTFMax {
			nb := make([]byte, (len(b)+utf8.UTFMax)*2)
			copy(nb, b[0:w])
			b = nb
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return
			}
			switch s[r] {
			default:
				return
			case '"', '\\', '/', '\'':
				b[w] = s[r]
				r++
				w++
			case 'b':
				b[w] = '\b'
				r++
				w++
			case 'f':
				b[w] = '\f'
				r++
				w++
			case 'n':
				b[w] = '\n'
				r++
				w++
			case 'r':
				b[w] = '\r'
				r++
				w++
			case 't':
				b[w] = '\t'
				r++
				w++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						// A valid pair; consume.
						r += 6
						w += utf8.EncodeRune(b[w:], dec)
						break
					}
					// Invalid surrogate; fall back to replacement rune.
					rr = utf8.RuneError
				}
				w += utf8.EncodeRune(b[w:], rr)
			}

		// Quote, control characters are invalid.
		case c == '"', c < ' ':
			return

		// ASCII
		case c < utf8.RuneSelf:
			b[w] = c
			r++
			w++

		// Coerce to well-formed UTF-8.
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			w += utf8.EncodeRune(b[w:], rr)
		}
	}
	return b[0:w], true
}
