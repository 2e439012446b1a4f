package wasmbin

import (
	"bytes"
	"io"
	"testing"
)

// FuzzRewrite: whatever the bytes, Parse, LimitMemory and SplitData do not
// panic; a module they rewrite parses again with the same custom section
// and a memory no larger than the limit, and split data reads as many
// bytes as it says, its runs in order inside the memory it names.
func FuzzRewrite(f *testing.F) {
	f.Add(dataModule(segments(segment(10, "ab"), segment(12, "cd"), segment(100, "ef"))))
	f.Add(dataModule(segments(segment(10, "abcd"), segment(12, "XY"))))
	f.Add(dataModule(segments(segment(-1, "ab"), segment(0, "cd"))))
	f.Add(append(dataModule(segments(segment(10, "ab"))), 0, 4, 1, 'x', 'h', 'i'))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x05\x04\x01\x01\x02\x03"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 4
		m, err := Parse(b, "x")
		if err != nil {
			return
		}
		orig := bytes.Clone(b)
		out, err := LimitMemory(b, m, limit)
		if !bytes.Equal(b, orig) {
			t.Fatal("LimitMemory changed its input")
		}
		if err != nil {
			return
		}
		m2, err := Parse(out, "x")
		if err != nil {
			t.Fatalf("the rewritten module does not parse: %v", err)
		}
		if !bytes.Equal(m.Custom, m2.Custom) {
			t.Fatalf("custom section %q became %q", m.Custom, m2.Custom)
		}
		split, data, err := SplitData(b, m, limit)
		if err != nil {
			t.Fatalf("SplitData failed where LimitMemory did not: %v", err)
		}
		if _, err := Parse(split, "x"); err != nil {
			t.Fatalf("the split module does not parse: %v", err)
		}
		if data == nil {
			return
		}
		got, err := io.ReadAll(data.Reader())
		if err != nil || uint64(len(got)) != data.Size {
			t.Fatalf("data reads %d bytes (%v), says %d", len(got), err, data.Size)
		}
		var at, end uint64
		for _, r := range data.Runs {
			if uint64(r.At) != at || uint64(r.Off) < end {
				t.Fatalf("runs out of order: %+v", data.Runs)
			}
			at += uint64(r.Size)
			end = uint64(r.Off) + uint64(r.Size)
		}
		if end != data.End || data.End > limit*PageSize {
			t.Fatalf("data ends at %d, says %d (limit %d pages)", end, data.End, limit)
		}
	})
}
