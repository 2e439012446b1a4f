// Package wasmbin reads and rewrites WebAssembly core modules, bytes in and
// bytes out, before the sandbox compiles them: it tells modules from
// components and from other files, finds a named custom section, lowers
// the memory's maximum to a plugin's limit, joins the data segments a Go
// linker writes by the tens of thousands, and can take the data section out
// of a module for the host to write into each new instance's memory. It
// reads only section headers and the memory and data sections; everything
// else is copied as it is, and the engine validates the result. Its Reader
// and its Append functions are the one reader and writer of the binary
// format's primitives (LEB128, names, sections) that the component parser
// (host/component) uses too.
package wasmbin

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrComponent is returned for a WASI 0.2 (component model) binary.
var ErrComponent = errors.New("this is a WASI 0.2 component, not a core module: it runs as a plugin of kind \"component\"")

// ErrNotWasm is returned for bytes that are not a WebAssembly binary.
var ErrNotWasm = errors.New("not a WebAssembly module (the file does not start with \\0asm)")

const (
	secCustom    = 0
	secMemory    = 5
	secStart     = 8
	secData      = 11
	secDataCount = 12
)

const (
	// PageSize is the size of a page of linear memory.
	PageSize = 65536
	// MaxPages is the most pages a 32-bit memory can have (4 GiB).
	MaxPages = 65536
)

// Module is what Parse reads from a module's bytes: where its sections are.
// It does not keep the bytes.
type Module struct {
	// Custom is the payload of the custom section Parse was asked for, or
	// nil when the module has none.
	Custom []byte
	// memStart/memEnd bound the memory section (id byte included); 0,0 when
	// the module defines no memory.
	memStart, memEnd int
	// dataStart/dataEnd bound the data section the same way.
	dataStart, dataEnd int
	// dataCount is set when the module has a data count section: its code
	// may name data segments (memory.init, data.drop), so they keep their
	// numbering.
	dataCount bool
	// start is set when the module has a start section: its function runs
	// inside instantiation, so the module keeps its data section
	// (SplitData).
	start bool
}

// Header is what the first 8 bytes of a file say it is.
type Header int

const (
	// HeaderNotWasm: the file does not start with \0asm.
	HeaderNotWasm Header = iota
	// HeaderTruncated: \0asm, then less than the 8-byte header.
	HeaderTruncated
	// HeaderComponent: a WASI 0.2 (component model) binary.
	HeaderComponent
	// HeaderModule: a version 1 core module.
	HeaderModule
	// HeaderOtherVersion: a core module of another binary version.
	HeaderOtherVersion
)

// ReadHeader tells core modules from components and from other bytes by
// the start of b. Config validation and every load tell them apart here.
func ReadHeader(b []byte) Header {
	switch {
	case len(b) < 4 || !bytes.Equal(b[:4], []byte("\x00asm")):
		return HeaderNotWasm
	case len(b) < 8:
		return HeaderTruncated
	case b[6] == 1 && b[7] == 0:
		// A core module has version 1 (01 00 00 00); a component has a
		// version in the first two bytes and layer 1 in the next two (e.g.
		// 0d 00 01 00).
		return HeaderComponent
	case !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}):
		return HeaderOtherVersion
	}
	return HeaderModule
}

// CheckHeader tells core modules from components (ErrComponent) and from
// other bytes (ErrNotWasm).
func CheckHeader(b []byte) error {
	switch ReadHeader(b) {
	case HeaderNotWasm, HeaderTruncated:
		return ErrNotWasm
	case HeaderComponent:
		return ErrComponent
	case HeaderOtherVersion:
		return fmt.Errorf("unsupported WebAssembly binary version % x; agenthost runs version 1 core modules", b[4:8])
	}
	return nil
}

// Parse walks the section headers of a core module and keeps the payload
// of the custom section named custom (a module with two is refused).
func Parse(b []byte, custom string) (*Module, error) {
	if err := CheckHeader(b); err != nil {
		return nil, err
	}
	out := &Module{}
	for off := 8; off < len(b); {
		start := off
		id, body, end, err := section(b, off)
		if err != nil {
			return nil, err
		}
		switch id {
		case secCustom:
			nameLen, m, err := Uleb32(b[body:end])
			if err != nil || body+m+int(nameLen) > end {
				return nil, fmt.Errorf("custom section at offset %d: bad name", start)
			}
			name := string(b[body+m : body+m+int(nameLen)])
			if name == custom {
				if out.Custom != nil {
					return nil, fmt.Errorf("module has two %s custom sections", custom)
				}
				out.Custom = append([]byte{}, b[body+m+int(nameLen):end]...)
			}
		case secMemory:
			out.memStart, out.memEnd = start, end
		case secData:
			out.dataStart, out.dataEnd = start, end
		case secDataCount:
			out.dataCount = true
		case secStart:
			out.start = true
		}
		off = end
	}
	return out, nil
}

// section reads the header of the section at b[off:]: its id, and where
// its contents start and end.
func section(b []byte, off int) (id byte, body, end int, err error) {
	id = b[off]
	size, n, err := Uleb32(b[off+1:])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("section at offset %d: size: %w", off, err)
	}
	body = off + 1 + n
	end = body + int(size)
	if end > len(b) || end < body {
		return 0, 0, 0, fmt.Errorf("section %d at offset %d: size %d runs past the end of the file", id, off, size)
	}
	return id, body, end, nil
}

// LimitMemory returns the module b (parsed as bin) with its memory's
// maximum lowered to limitPages, so the engine refuses any growth past the
// plugin's limit. b is not modified. A module whose initial memory already
// exceeds the limit is refused. The data segments are joined on the way
// (planMerge).
func LimitMemory(b []byte, bin *Module, limitPages uint32) ([]byte, error) {
	out, _, err := rewrite(b, bin, limitPages, false)
	return out, err
}

// SplitData is LimitMemory that also leaves the data section out of the
// module when it can, and returns the data for the host to write into each
// new instance's memory before any of the guest's code runs; nil Data when
// the module keeps its data section. It can for the shape planMerge
// rewrites, in a module without a start section (whose function would run
// inside instantiation, before the host writes the data) and whose data
// fits its initial memory. Without a data count section no instruction can
// name a data segment, so leaving the section out changes nothing else. The
// Data reads its bytes from b, which must not change while it is used.
func SplitData(b []byte, bin *Module, limitPages uint32) ([]byte, *Data, error) {
	return rewrite(b, bin, limitPages, true)
}

// MemoryLimitError refuses a module whose memory needs more pages at
// start than its limit allows.
type MemoryLimitError struct {
	Min, Limit uint32 // in pages
}

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("module needs %d MiB of memory at start, over its memory limit of %d MiB; raise limits.memory", uint64(e.Min)*PageSize>>20, uint64(e.Limit)*PageSize>>20)
}

// CapMemories returns a copy of the module b with the maximum of every
// memory it defines set to limitPages, for a module that may define more
// than one or a shared one (a component's core modules; plugins' go
// through LimitMemory). Other sections are copied as they are. A memory
// whose minimum exceeds the limit is refused with a *MemoryLimitError.
func CapMemories(b []byte, limitPages uint32) ([]byte, error) {
	if len(b) < 8 {
		return nil, ErrNotWasm
	}
	out := append(make([]byte, 0, len(b)+16), b[:8]...)
	for off := 8; off < len(b); {
		id, body, end, err := section(b, off)
		if err != nil {
			return nil, err
		}
		if id != secMemory {
			out = append(out, b[off:end]...)
			off = end
			continue
		}
		p := b[body:end]
		count, n, err := Uleb32(p)
		if err != nil {
			return nil, fmt.Errorf("memory section: %w", err)
		}
		p = p[n:]
		sec := AppendUleb32(nil, count)
		for range count {
			if len(p) == 0 {
				return nil, errors.New("memory section: truncated")
			}
			flags := p[0]
			if flags&^3 != 0 {
				return nil, fmt.Errorf("memory flags 0x%02x (64-bit memory) are not supported", flags)
			}
			min, n, err := Uleb32(p[1:])
			if err != nil {
				return nil, fmt.Errorf("memory section: minimum: %w", err)
			}
			p = p[1+n:]
			if flags&1 != 0 {
				if _, n, err = Uleb32(p); err != nil {
					return nil, fmt.Errorf("memory section: maximum: %w", err)
				}
				p = p[n:]
			}
			if min > limitPages {
				return nil, &MemoryLimitError{Min: min, Limit: limitPages}
			}
			sec = append(sec, flags|1)
			sec = AppendUleb32(sec, min)
			sec = AppendUleb32(sec, limitPages)
		}
		out = AppendSection(out, secMemory, sec)
		off = end
	}
	return out, nil
}

// rewrite is LimitMemory, and SplitData when split is set.
func rewrite(b []byte, bin *Module, limitPages uint32, split bool) ([]byte, *Data, error) {
	if bin.memEnd == 0 {
		return b, nil, nil
	}
	sec := b[bin.memStart:bin.memEnd]
	_, n, err := Uleb32(sec[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("memory section: %w", err)
	}
	p := sec[1+n:]
	count, n, err := Uleb32(p)
	if err != nil {
		return nil, nil, fmt.Errorf("memory section: %w", err)
	}
	p = p[n:]
	if count == 0 {
		return b, nil, nil
	}
	if count > 1 {
		return nil, nil, fmt.Errorf("module defines %d memories; agenthost supports one", count)
	}
	if len(p) == 0 {
		return nil, nil, errors.New("memory section: truncated")
	}
	flags := p[0]
	if flags > 1 {
		return nil, nil, fmt.Errorf("memory flags 0x%02x (shared or 64-bit memory) are not supported", flags)
	}
	min, n, err := Uleb32(p[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("memory section: minimum: %w", err)
	}
	max := uint32(MaxPages)
	if flags == 1 {
		if max, _, err = Uleb32(p[1+n:]); err != nil {
			return nil, nil, fmt.Errorf("memory section: maximum: %w", err)
		}
	}
	if min > limitPages {
		return nil, nil, &MemoryLimitError{Min: min, Limit: limitPages}
	}
	if max > limitPages {
		max = limitPages
	}
	var body []byte
	body = AppendUleb32(body, 1)
	body = append(body, 1)
	body = AppendUleb32(body, min)
	body = AppendUleb32(body, max)
	// One allocation of the final size: the module can be megabytes.
	size := bin.memStart + 1 + ulebLen(uint32(len(body))) + len(body) + len(b) - bin.memEnd
	m := planMerge(b, bin)
	var data *Data
	if split && m != nil && !bin.start && m.end() <= uint64(min)*PageSize {
		data = newData(b, m.segs)
	}
	switch {
	case data != nil:
		size -= bin.dataEnd - bin.dataStart
	case m != nil:
		size += m.size - (bin.dataEnd - bin.dataStart)
	}
	out := make([]byte, 0, size)
	out = append(out, b[:bin.memStart]...)
	out = append(out, secMemory)
	out = AppendUleb32(out, uint32(len(body)))
	out = append(out, body...)
	switch {
	case data != nil:
		out = append(out, b[bin.memEnd:bin.dataStart]...)
		out = append(out, b[bin.dataEnd:]...)
		return out, data, nil
	case m != nil:
		out = append(out, b[bin.memEnd:bin.dataStart]...)
		out = m.appendTo(out, b)
		out = append(out, b[bin.dataEnd:]...)
		return out, nil, nil
	}
	out = append(out, b[bin.memEnd:]...)
	return out, nil, nil
}

// mergeGap is the largest run of zero bytes planMerge fills to join two
// data segments.
const mergeGap = 4096

// dataSegment is an active data segment of memory 0 at a constant offset:
// its bytes are b[at : at+size] of the module b.
type dataSegment struct {
	off, at, size uint32
}

// dataGroup is one segment of a merged data section: segments
// segs[from:to], which cover [off, off+size) of memory.
type dataGroup struct {
	from, to  int
	off, size uint32
}

// joinSegments groups segs, sorted by offset, into runs across gaps of at
// most gap zero bytes; false when two segments overlap (their order would
// matter) or a group would pass 1 GiB.
func joinSegments(segs []dataSegment, gap uint64) ([]dataGroup, bool) {
	var groups []dataGroup
	for i := 0; i < len(segs); {
		j, end := i+1, uint64(segs[i].off)+uint64(segs[i].size)
		for j < len(segs) {
			if uint64(segs[j].off) < end {
				return nil, false
			}
			if uint64(segs[j].off)-end > gap {
				break
			}
			end = uint64(segs[j].off) + uint64(segs[j].size)
			j++
		}
		if end-uint64(segs[i].off) > 1<<30 {
			return nil, false
		}
		groups = append(groups, dataGroup{from: i, to: j, off: segs[i].off, size: uint32(end - uint64(segs[i].off))})
		i = j
	}
	return groups, true
}

// dataMerge is how planMerge rewrites a data section: its segments, sorted
// by offset, the groups they join into, and the size of the new section
// with its id byte and size.
type dataMerge struct {
	segs   []dataSegment
	groups []dataGroup
	body   int // the section's size field
	size   int // the whole section's
}

// planMerge plans the rewrite of the module's data section, or returns nil
// to keep the section as it is. Go's wasm linker cuts its data at every run
// of zeros into tens of thousands of segments; the engine keeps each one
// as a heap object and copies them one by one into every new instance.
// Joining segments across gaps of at most mergeGap zero bytes leaves a
// fresh memory exactly as the original module's, since memory starts zeroed
// and no other segment writes into a gap. Only the simple, unambiguous shape
// is rewritten: every segment active on memory 0 at an i32.const offset,
// none overlapping another, and no data count section (which code that
// names segments by index needs). The plan holds offsets into b, not
// copies: the caller writes the new section straight into the module it
// builds (appendTo), so a large module is copied once.
func planMerge(b []byte, bin *Module) *dataMerge {
	if bin.dataEnd == 0 || bin.dataCount || bin.dataStart < bin.memEnd {
		return nil
	}
	_, n, err := Uleb32(b[bin.dataStart+1:])
	if err != nil {
		return nil
	}
	pos := bin.dataStart + 1 + n
	p := b[pos:bin.dataEnd]
	count, n, err := Uleb32(p)
	if err != nil || count < 2 || uint64(count) > uint64(len(p)) {
		return nil
	}
	p, pos = p[n:], pos+n
	segs := make([]dataSegment, 0, count)
	sorted := true
	for range count {
		// 0x00 (active, memory 0), i32.const, a signed LEB128, end.
		if len(p) < 3 || p[0] != 0 || p[1] != 0x41 {
			return nil
		}
		off, n, err := Sleb32(p[2:])
		if err != nil || len(p) < 3+n || p[2+n] != 0x0b {
			return nil
		}
		p, pos = p[3+n:], pos+3+n
		size, n, err := Uleb32(p)
		if err != nil || uint64(size) > uint64(len(p)-n) {
			return nil
		}
		if len(segs) > 0 && uint32(off) < segs[len(segs)-1].off {
			sorted = false
		}
		segs = append(segs, dataSegment{off: uint32(off), at: uint32(pos + n), size: size})
		p, pos = p[n+int(size):], pos+n+int(size)
	}
	if len(p) != 0 {
		return nil
	}
	if !sorted {
		slices.SortStableFunc(segs, func(a, b dataSegment) int { return cmp.Compare(a.off, b.off) })
	}
	groups, ok := joinSegments(segs, mergeGap)
	if !ok {
		return nil
	}
	if len(groups) == len(segs) {
		return nil
	}
	body := ulebLen(uint32(len(groups)))
	for _, g := range groups {
		body += 3 + len(AppendSleb32(nil, int32(g.off))) + ulebLen(g.size) + int(g.size)
	}
	if body > 1<<31 {
		return nil
	}
	return &dataMerge{segs: segs, groups: groups, body: body, size: 1 + ulebLen(uint32(body)) + body}
}

// end is where the last segment ends in memory.
func (m *dataMerge) end() uint64 {
	g := m.groups[len(m.groups)-1]
	return uint64(g.off) + uint64(g.size)
}

// appendTo appends the merged data section of module b to out.
func (m *dataMerge) appendTo(out, b []byte) []byte {
	out = append(out, secData)
	out = AppendUleb32(out, uint32(m.body))
	out = AppendUleb32(out, uint32(len(m.groups)))
	for _, g := range m.groups {
		out = append(out, 0, 0x41)
		out = AppendSleb32(out, int32(g.off))
		out = append(out, 0x0b)
		out = AppendUleb32(out, g.size)
		start := len(out)
		out = slices.Grow(out, int(g.size))[:start+int(g.size)]
		clear(out[start:])
		for _, s := range m.segs[g.from:g.to] {
			copy(out[start+int(s.off-g.off):], b[s.at:s.at+s.size])
		}
	}
	return out
}

// ulebLen is the length of v in unsigned LEB128.
func ulebLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// The errors of Uleb32 and Sleb32, for readers that word their own.
var (
	ErrTruncated = errors.New("truncated LEB128")
	ErrOverflow  = errors.New("LEB128 overflows 32 bits")
	ErrTooLong   = errors.New("LEB128 too long")
)

// Uleb32 reads an unsigned LEB128 of at most 32 bits from the start of b
// and returns it with the number of bytes it takes.
func Uleb32(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		if i == 4 {
			if c&0x80 != 0 {
				return 0, 0, ErrTooLong
			}
			if c > 0x0f {
				return 0, 0, ErrOverflow
			}
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, ErrTooLong
}

// Sleb32 reads a signed LEB128 of at most 32 bits.
func Sleb32(b []byte) (int32, int, error) {
	var v int64
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << (7 * (i + 1))
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, 0, ErrOverflow
			}
			return int32(v), i + 1, nil
		}
	}
	return 0, 0, ErrTooLong
}

// AppendSleb32 appends v in signed LEB128.
func AppendSleb32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendUleb32 appends v in unsigned LEB128.
func AppendUleb32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// AppendName appends a name: its length, then its bytes.
func AppendName(b []byte, s string) []byte {
	b = AppendUleb32(b, uint32(len(s)))
	return append(b, s...)
}

// AppendSection appends a section: its id, its size, then body.
func AppendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = AppendUleb32(b, uint32(len(body)))
	return append(b, body...)
}
