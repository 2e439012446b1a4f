package loadcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/internal/wasmbin"
)

// Data segments written by the host. Instantiating a module copies its
// active data segments into the new memory; wazero decodes them onto the
// Go heap when it compiles the module and keeps them there as long as the
// compiled module lives (for a Go guest, megabytes of live heap for the
// whole run). So a module whose data wasmbin.SplitData can take out is
// compiled without its data section, and the host writes the data into
// each new instance's memory (host/plugin's Runtime.instantiate): after wazero has made
// the memory, all zero, and before the guest runs a single instruction,
// since no start function runs inside instantiation (the module has no
// start section and agenthost names none; _start, _initialize and the
// exports are called afterwards). A new instance's memory is then byte for
// byte what it would have been (TestSplitDataSameMemory).
//
// The data goes to a file of the private cache named by the module's
// sha256, checked against the module byte for byte whenever a compile uses
// it; a missing or different one is written afresh (to a temporary file
// renamed into place). The compiled module keeps it open. Without a cache
// directory, or when the file cannot be written, the data stays in memory
// instead.
type GuestData struct {
	runs []wasmbin.Run
	end  uint64   // where the last run ends in memory
	f    *os.File // the runs back to back; nil: buf holds them
	buf  []byte
}

// DataDir is the cache's directory of module data; DataFormat names the
// files' layout.
const (
	DataDir    = "agenthost-data"
	DataFormat = "1"
)

// GuestData stores d: in the cache directory, under sum, when both are
// set, else in memory. nil: it could not be read.
func (c Cache) GuestData(d *wasmbin.Data, sum string) *GuestData {
	g := &GuestData{runs: d.Runs, end: d.End}
	if c.dir != "" && sum != "" {
		path := filepath.Join(c.dir, DataDir, sum+"."+DataFormat)
		if g.f = openCacheFile(path, int64(d.Size), d.Reader); g.f != nil {
			return g
		}
	}
	g.buf = make([]byte, d.Size)
	if _, err := io.ReadFull(d.Reader(), g.buf); err != nil {
		return nil
	}
	return g
}

// openCacheFile returns the file at path (in a private directory of the
// cache) holding exactly what src reads, size bytes, writing it if it is
// missing, not private, or differs; nil when that fails.
func openCacheFile(path string, size int64, src func() io.Reader) *os.File {
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || !private(st) {
		return nil
	}
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && private(st) && st.Size() == size && sameBytes(f, src()) {
			return f
		}
		f.Close()
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil
	}
	n, err := io.Copy(tmp, src())
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

// Write copies the module's data into mod's memory, all zero until now.
func (d *GuestData) Write(mod api.Module) error {
	// The module defines the memory its data segments fill (SplitData).
	size := uint64(mod.Memory().Size())
	if size < d.end {
		return fmt.Errorf("data segments end at byte %d, past the module's initial memory of %d bytes", d.end, size)
	}
	mem, _ := mod.Memory().Read(0, uint32(size))
	if uint64(len(mem)) < d.end {
		return fmt.Errorf("the module's memory of %d bytes is not readable", size)
	}
	for _, r := range d.runs {
		out := mem[r.Off : r.Off+r.Size]
		if d.f == nil {
			copy(out, d.buf[r.At:])
			continue
		}
		if n, err := d.f.ReadAt(out, int64(r.At)); n != len(out) {
			return fmt.Errorf("reading the module's data from %s: %v (the cache was changed; start again)", d.f.Name(), err)
		}
	}
	return nil
}
