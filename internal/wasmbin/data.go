package wasmbin

import "io"

// Data is the data section SplitData took out of a module: runs of bytes
// to write at offsets of a new instance's memory, which is all zero until
// then. Its bytes are read from the module with Reader, the runs back to
// back.
type Data struct {
	// Runs are in order of offset and do not overlap.
	Runs []Run
	// End is where the last run ends in memory.
	End uint64
	// Size is the length of the runs together: what Reader reads.
	Size uint64

	b    []byte
	segs []dataSegment
}

// Run is the bytes at [At, At+Size) of what Reader reads, written at Off
// in memory.
type Run struct {
	Off, At, Size uint32
}

// dataGap is the largest run of zero bytes kept to join two segments into
// one run: fewer reads and writes for a few bytes of zeros.
const dataGap = 64

// newData joins segs (sorted by offset, not overlapping, their bytes in b;
// planMerge's) into runs; nil when they cannot be joined.
func newData(b []byte, segs []dataSegment) *Data {
	groups, ok := joinSegments(segs, dataGap)
	if !ok || len(groups) == 0 {
		return nil
	}
	d := &Data{Runs: make([]Run, len(groups)), b: b, segs: segs}
	for i, g := range groups {
		d.Runs[i] = Run{Off: g.off, At: uint32(d.Size), Size: g.size}
		d.Size += uint64(g.size)
	}
	last := d.Runs[len(d.Runs)-1]
	d.End = uint64(last.Off) + uint64(last.Size)
	return d
}

// Reader reads the runs back to back, from the start: Size bytes, the
// zeros between two segments of a run included.
func (d *Data) Reader() io.Reader {
	return &dataReader{b: d.b, segs: d.segs, runs: d.Runs}
}

// dataReader reads the runs of a module's data back to back, from its
// segments: the bytes between two segments of a run are zero.
type dataReader struct {
	b    []byte
	segs []dataSegment
	runs []Run
	r, k int    // the current run and the first segment not yet read past
	pos  uint64 // the memory offset read next, in run r
}

func (d *dataReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && d.r < len(d.runs) {
		run := d.runs[d.r]
		if d.pos < uint64(run.Off) {
			d.pos = uint64(run.Off)
		}
		end := uint64(run.Off) + uint64(run.Size)
		lo := d.pos
		hi := min(end, lo+uint64(len(p)-n))
		out := p[n : n+int(hi-lo)]
		clear(out)
		for d.k < len(d.segs) {
			s := d.segs[d.k]
			so, se := uint64(s.off), uint64(s.off)+uint64(s.size)
			if so >= hi {
				break
			}
			if a, e := max(so, lo), min(se, hi); a < e {
				copy(out[a-lo:e-lo], d.b[uint64(s.at)+a-so:uint64(s.at)+e-so])
			}
			if se > hi {
				break // goes on in the next read
			}
			d.k++
		}
		n += len(out)
		d.pos = hi
		if hi == end {
			d.r++
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
