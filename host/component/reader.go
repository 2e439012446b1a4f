package component

import (
	"fmt"
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// reader decodes the primitives of the WebAssembly binary format from one
// section. Every read is bounds-checked; a malformed binary yields an
// error naming the offset, never a panic.
type reader struct {
	b   []byte
	off int // offset of b[0] in the whole file, for messages
	pos int
}

// formatError is a malformed binary.
type formatError struct {
	off int
	msg string
}

func (e *formatError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

func (r *reader) fail(format string, args ...any) error {
	return &formatError{off: r.off + r.pos, msg: fmt.Sprintf(format, args...)}
}

func (r *reader) eof() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end of section")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end of section")
	}
	return r.b[r.pos], nil
}

func (r *reader) u32() (uint32, error) {
	v, n, err := wasmbin.Uleb32(r.b[r.pos:])
	switch {
	case err == wasmbin.ErrTruncated:
		r.pos = len(r.b)
		return 0, r.fail("unexpected end of section")
	case err == wasmbin.ErrOverflow:
		r.pos += 5
		return 0, r.fail("integer too large")
	case err != nil:
		r.pos += 5
		return 0, r.fail("integer representation too long")
	}
	r.pos += n
	return v, nil
}

// s33 reads a signed LEB128 of up to 33 bits (value types: negative for
// primitive types, non-negative for type indices).
func (r *reader) s33() (int64, error) {
	var v int64
	var shift uint
	for {
		c, err := r.byte()
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
			return 0, r.fail("integer representation too long")
		}
	}
}

// count reads a vector length, bounded by the bytes left (every element
// takes at least one byte), so a hostile length cannot make us allocate.
func (r *reader) count() (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int(n) > len(r.b)-r.pos {
		return 0, r.fail("vector of %d elements is longer than its section", n)
	}
	return int(n), nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.fail("%d bytes run past the end of the section", n)
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *reader) name() (string, error) {
	n, err := r.count()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.fail("name is not UTF-8")
	}
	return string(b), nil
}

// externName reads nameattributes: a discriminator, the name, and for 0x02
// a vector of attributes (implements, a version suffix, an external id),
// which are skipped: names, not attributes, identify imports and exports.
func (r *reader) externName() (string, error) {
	c, err := r.byte()
	if err != nil {
		return "", err
	}
	switch c {
	case 0x00, 0x01:
		return r.name()
	case 0x02:
		n, err := r.name()
		if err != nil {
			return "", err
		}
		k, err := r.count()
		if err != nil {
			return "", err
		}
		for range k {
			if _, err := r.byte(); err != nil {
				return "", err
			}
			if _, err := r.name(); err != nil {
				return "", err
			}
		}
		return n, nil
	}
	return "", r.fail("unknown name form 0x%02x", c)
}

// section is one section of a component or module.
type section struct {
	id   byte
	off  int // offset of the section's contents in the file
	data []byte
}

// sections splits a binary's body (after the 8-byte header) into sections.
func sections(b []byte, base int) ([]section, error) {
	var out []section
	r := &reader{b: b, off: base}
	for !r.eof() {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		start := r.pos
		data, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		out = append(out, section{id: id, off: base + start, data: data})
	}
	return out, nil
}
