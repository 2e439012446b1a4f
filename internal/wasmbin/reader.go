package wasmbin

import (
	"fmt"
	"unicode/utf8"
)

// Reader decodes the primitives of the WebAssembly binary format from one
// section, for the component parser (host/component) and its core module
// reader. Every read is bounds-checked; a malformed binary yields a
// *FormatError naming the offset, never a panic.
type Reader struct {
	b   []byte
	off int // offset of b[0] in the whole file, for messages
	pos int
}

// NewReader reads b, which starts at offset off of its file.
func NewReader(b []byte, off int) *Reader { return &Reader{b: b, off: off} }

// FormatError is a malformed binary.
type FormatError struct {
	Off int // in the whole file
	Msg string
}

func (e *FormatError) Error() string { return fmt.Sprintf("offset %d: %s", e.Off, e.Msg) }

// Fail returns a *FormatError at the reader's position.
func (r *Reader) Fail(format string, args ...any) error {
	return &FormatError{Off: r.off + r.pos, Msg: fmt.Sprintf(format, args...)}
}

// EOF reports whether every byte has been read.
func (r *Reader) EOF() bool { return r.pos >= len(r.b) }

// Pos is the position in the reader's bytes (not the file's offset).
func (r *Reader) Pos() int { return r.pos }

// Since returns the bytes read since position start.
func (r *Reader) Since(start int) []byte { return r.b[start:r.pos] }

// Rest returns the bytes not read yet.
func (r *Reader) Rest() []byte { return r.b[r.pos:] }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.Fail("unexpected end of section")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// Peek returns the next byte without reading it.
func (r *Reader) Peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.Fail("unexpected end of section")
	}
	return r.b[r.pos], nil
}

// U32 reads an unsigned LEB128 of at most 32 bits (Uleb32).
func (r *Reader) U32() (uint32, error) {
	v, n, err := Uleb32(r.b[r.pos:])
	switch {
	case err == ErrTruncated:
		r.pos = len(r.b)
		return 0, r.Fail("unexpected end of section")
	case err == ErrOverflow:
		r.pos += 5
		return 0, r.Fail("integer too large")
	case err != nil:
		r.pos += 5
		return 0, r.Fail("integer representation too long")
	}
	r.pos += n
	return v, nil
}

// S33 reads a signed LEB128 of up to 33 bits (value types: negative for
// primitive types, non-negative for type indices).
func (r *Reader) S33() (int64, error) {
	var v int64
	var shift uint
	for {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
		if shift >= 35 {
			return 0, r.Fail("integer representation too long")
		}
	}
}

// Count reads a vector length, bounded by the bytes left (every element
// takes at least one byte), so a hostile length cannot make us allocate.
func (r *Reader) Count() (int, error) {
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if int(n) > len(r.b)-r.pos {
		return 0, r.Fail("vector of %d elements is longer than its section", n)
	}
	return int(n), nil
}

// Bytes reads n bytes; the slice shares the reader's memory.
func (r *Reader) Bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.Fail("%d bytes run past the end of the section", n)
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// ByteVec reads a vector of bytes: its length, then its bytes, which
// share the reader's memory.
func (r *Reader) ByteVec() ([]byte, error) {
	n, err := r.Count()
	if err != nil {
		return nil, err
	}
	return r.Bytes(n)
}

// Name reads a name: its length, then that many bytes of UTF-8.
func (r *Reader) Name() (string, error) {
	b, err := r.ByteVec()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.Fail("name is not UTF-8")
	}
	return string(b), nil
}

// Section is one section of a component or module.
type Section struct {
	ID   byte
	Off  int // offset of the section's contents in the file
	Data []byte
}

// Sections splits a binary's body (after the 8-byte header), which starts
// at offset base of its file, into sections.
func Sections(b []byte, base int) ([]Section, error) {
	var out []Section
	r := NewReader(b, base)
	for !r.EOF() {
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		start := r.pos
		data, err := r.Bytes(int(size))
		if err != nil {
			return nil, err
		}
		out = append(out, Section{ID: id, Off: base + start, Data: data})
	}
	return out, nil
}

// Vec reads a vector: its length (Count), then its elements, each with
// one call of each, which stops at the first error. It returns the length.
func (r *Reader) Vec(each func() error) (int, error) {
	n, err := r.Count()
	if err != nil {
		return 0, err
	}
	for range n {
		if err := each(); err != nil {
			return n, err
		}
	}
	return n, nil
}
