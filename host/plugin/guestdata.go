package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Data segments written by the host. Instantiating a module copies its
// active data segments into the new memory. wazero decodes them onto the
// Go heap when it compiles the module and keeps them there as long as the
// compiled module lives: for a Go guest about 1.5 MB of live heap for the
// whole run, which the collector lets the heap grow to about twice, on top
// of the copy of the module the compile reads them from.
//
// So a module of the shape planMerge rewrites (every segment active on
// memory 0 at a constant offset, none overlapping, no data count section),
// without a start section and whose data fits its initial memory, is
// compiled without its data section (splitData). The segments, joined into
// runs across gaps of at most dataGap zero bytes, go to a file of the
// private cache, and the host reads them from it into each new instance's
// memory (Runtime.instantiate): after wazero has made the memory, all zero,
// and before the guest runs a single instruction, since no start function
// runs inside instantiation (the module has no start section and agenthost
// names none; _start, _initialize and the exports are called after). A new
// instance's memory is then byte for byte what it would have been
// (TestSplitDataSameMemory). Without a data count section no instruction
// can name a data segment, so leaving the section out changes nothing else.
//
// The file is named by the module's sha256 and checked against the module,
// byte for byte, whenever a compile uses it; a missing or different one is
// written afresh (to a temporary file renamed into place). The compiled
// module keeps it open. Without a cache directory, or when the file cannot
// be written, the runs stay in memory instead.
type guestData struct {
	runs []dataRun
	end  uint64   // where the last run ends in memory
	f    *os.File // the runs back to back; nil: buf holds them
	buf  []byte
}

// dataRun is the bytes at [at, at+size) of the file (or buf), written at
// off in memory.
type dataRun struct {
	off, at, size uint32
}

// dataGap is the largest run of zero bytes kept to join two segments into
// one run: fewer reads for a few bytes of zeros.
const dataGap = 64

// dataDir is the cache's directory of module data; dataFormat names the
// files' layout.
const (
	dataDir    = "agenthost-data"
	dataFormat = "1"
)

// newGuestData joins segs (sorted by offset, not overlapping, their bytes
// in b; planMerge's) into runs and stores them: in the cache directory, under sum,
// when both are set, else in memory. nil: the module keeps its data.
func newGuestData(b []byte, segs []dataSegment, cacheDir, sum string) *guestData {
	groups, ok := joinSegments(segs, dataGap)
	if !ok {
		return nil
	}
	d := &guestData{runs: make([]dataRun, len(groups))}
	var total uint64
	for i, g := range groups {
		d.runs[i] = dataRun{off: g.off, at: uint32(total), size: g.size}
		total += uint64(g.size)
	}
	last := d.runs[len(d.runs)-1]
	d.end = uint64(last.off) + uint64(last.size)
	src := &dataReader{b: b, segs: segs, runs: d.runs}
	if cacheDir != "" && sum != "" {
		path := filepath.Join(cacheDir, dataDir, sum+"."+dataFormat)
		if d.f = openCacheFile(path, int64(total), src); d.f != nil {
			return d
		}
		src.reset()
	}
	d.buf = make([]byte, total)
	if _, err := io.ReadFull(src, d.buf); err != nil {
		return nil
	}
	return d
}

// cacheSource is what a file of the cache must hold.
type cacheSource interface {
	// sameAs reports whether f, read from where it is, holds exactly
	// the source.
	sameAs(f *os.File) bool
	// WriteTo writes the source to w.
	io.WriterTo
}

// openCacheFile returns the file at path (in a private directory of the
// cache) holding exactly src, size bytes, writing it if it is missing, not
// private, or differs; nil when that fails.
func openCacheFile(path string, size int64, src cacheSource) *os.File {
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || !private(st) {
		return nil
	}
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && private(st) && st.Size() == size && src.sameAs(f) {
			return f
		}
		f.Close()
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil
	}
	n, err := src.WriteTo(tmp)
	if err != nil || n != size || os.Rename(tmp.Name(), path) != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil
	}
	return tmp // renamed: the file at path, as written through this descriptor
}

// sameBytes reports whether f holds what src reads, to the end of both.
func sameBytes(f *os.File, src io.Reader) bool {
	var a, b [32 << 10]byte
	for {
		n, err := io.ReadFull(src, a[:])
		m, ferr := io.ReadFull(f, b[:n])
		if ferr != nil || m != n || !bytes.Equal(a[:n], b[:n]) {
			return false
		}
		if err != nil { // the end of src: f must end too
			k, _ := f.Read(b[:1])
			return k == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
		}
	}
}

// dataReader reads the runs of a module's data back to back, from its
// segments: the bytes between two segments of a run are zero.
type dataReader struct {
	b    []byte
	segs []dataSegment
	runs []dataRun
	r, k int    // the current run and the first segment not yet read past
	pos  uint64 // the memory offset read next, in run r
}

func (d *dataReader) reset() { d.r, d.k, d.pos = 0, 0, 0 }

func (d *dataReader) sameAs(f *os.File) bool {
	d.reset()
	return sameBytes(f, d)
}

func (d *dataReader) WriteTo(w io.Writer) (int64, error) {
	d.reset()
	return io.Copy(w, struct{ io.Reader }{d})
}

func (d *dataReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && d.r < len(d.runs) {
		run := d.runs[d.r]
		if d.pos < uint64(run.off) {
			d.pos = uint64(run.off)
		}
		end := uint64(run.off) + uint64(run.size)
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

// write copies the module's data into mod's memory, all zero until now.
func (d *guestData) write(mod api.Module) error {
	// The module defines the memory its data segments fill (splitData).
	size := uint64(mod.Memory().Size())
	if size < d.end {
		return fmt.Errorf("data segments end at byte %d, past the module's initial memory of %d bytes", d.end, size)
	}
	mem, _ := mod.Memory().Read(0, uint32(size))
	if uint64(len(mem)) < d.end {
		return fmt.Errorf("the module's memory of %d bytes is not readable", size)
	}
	for _, r := range d.runs {
		out := mem[r.off : r.off+r.size]
		if d.f == nil {
			copy(out, d.buf[r.at:])
			continue
		}
		if n, err := d.f.ReadAt(out, int64(r.at)); n != len(out) {
			return fmt.Errorf("reading the module's data from %s: %v (the cache was changed; start again)", d.f.Name(), err)
		}
	}
	return nil
}

// compiledModule is a module compiled without its data section and the
// data, for Runtime.instantiate. Everything else is the CompiledModule's.
type compiledModule struct {
	wazero.CompiledModule
	data *guestData
}

// instantiate is the runtime's InstantiateModule for a module of
// compilePatched: it writes the module's data, if the host keeps it, into
// the new instance's memory. No start function runs inside it: callers
// call the guest's entry points afterwards.
func (r *Runtime) instantiate(ctx context.Context, cm wazero.CompiledModule, cfg wazero.ModuleConfig) (api.Module, error) {
	c, ok := cm.(*compiledModule)
	if !ok {
		return r.rt.InstantiateModule(ctx, cm, cfg.WithStartFunctions())
	}
	mod, err := r.rt.InstantiateModule(ctx, c.CompiledModule, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if err := c.data.write(mod); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return mod, nil
}
