package wasmbin

import (
	"errors"
	"testing"
)

func TestReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		read func(r *Reader) error
		want string
	}{
		{"truncated u32", []byte{0x80}, func(r *Reader) error { _, err := r.U32(); return err }, "offset 11: unexpected end of section"},
		{"u32 too large", []byte{0xff, 0xff, 0xff, 0xff, 0x7f}, func(r *Reader) error { _, err := r.U32(); return err }, "offset 15: integer too large"},
		{"u32 too long", []byte{0xff, 0xff, 0xff, 0xff, 0x8f, 0x00}, func(r *Reader) error { _, err := r.U32(); return err }, "offset 15: integer representation too long"},
		{"s33 too long", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, func(r *Reader) error { _, err := r.S33(); return err }, "offset 15: integer representation too long"},
		{"count past the end", []byte{0x03, 0x00}, func(r *Reader) error { _, err := r.Count(); return err }, "offset 11: vector of 3 elements is longer than its section"},
		{"bytes past the end", []byte{0x01}, func(r *Reader) error { _, err := r.Bytes(2); return err }, "offset 10: 2 bytes run past the end of the section"},
		{"name not UTF-8", []byte{0x01, 0xff}, func(r *Reader) error { _, err := r.Name(); return err }, "offset 12: name is not UTF-8"},
		{"vec element fails", []byte{0x02, 0x01, 0x02}, func(r *Reader) error {
			_, err := r.Vec(func() error { _, err := r.Bytes(2); return err })
			return err
		}, "offset 13: 2 bytes run past the end of the section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(NewReader(tc.b, 10))
			var fe *FormatError
			if !errors.As(err, &fe) || err.Error() != tc.want {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestReaderValues(t *testing.T) {
	r := NewReader([]byte{0xe5, 0x8e, 0x26, 0x7f, 0x40, 0x02, 'h', 'i', 0x02, 0x05, 0x06, 0x01, 0xaa}, 0)
	if v, err := r.U32(); err != nil || v != 624485 {
		t.Fatalf("U32 = %d, %v", v, err)
	}
	if v, err := r.S33(); err != nil || v != -1 {
		t.Fatalf("S33 = %d, %v", v, err)
	}
	if v, err := r.S33(); err != nil || v != -64 {
		t.Fatalf("S33 = %d, %v", v, err)
	}
	if s, err := r.Name(); err != nil || s != "hi" {
		t.Fatalf("Name = %q, %v", s, err)
	}
	var got []byte
	if n, err := r.Vec(func() error { c, err := r.Byte(); got = append(got, c); return err }); err != nil || n != 2 || string(got) != "\x05\x06" {
		t.Fatalf("Vec = %d, %q, %v", n, got, err)
	}
	start := r.Pos()
	if b, err := r.ByteVec(); err != nil || string(b) != "\xaa" || string(r.Since(start)) != "\x01\xaa" || !r.EOF() || len(r.Rest()) != 0 {
		t.Fatalf("ByteVec = %q, %v", b, err)
	}
}

func TestSections(t *testing.T) {
	body := AppendSection(AppendSection(nil, 1, []byte("ab")), 7, nil)
	secs, err := Sections(body, 8)
	if err != nil || len(secs) != 2 || secs[0].ID != 1 || secs[0].Off != 10 || string(secs[0].Data) != "ab" || secs[1].ID != 7 || secs[1].Off != 14 || len(secs[1].Data) != 0 {
		t.Fatalf("Sections = %+v, %v", secs, err)
	}
	if _, err := Sections([]byte{1, 5, 0}, 8); err == nil || err.Error() != "offset 10: 5 bytes run past the end of the section" {
		t.Fatalf("err = %v", err)
	}
}
