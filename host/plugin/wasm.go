package plugin

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ManifestSection is the name of the custom section that carries an
// agenthost/1 manifest.
const ManifestSection = "agenthost.manifest"

// ErrComponent is returned for a WASI 0.2 (component model) binary.
var ErrComponent = errors.New("this is a WASI 0.2 component; agenthost runs WASI preview1 core modules; rebuild for wasm32-wasip1 (Go: GOOS=wasip1 GOARCH=wasm)")

// ErrNotWasm is returned for bytes that are not a WebAssembly binary.
var ErrNotWasm = errors.New("not a WebAssembly module (the file does not start with \\0asm)")

const (
	secCustom    = 0
	secMemory    = 5
	secData      = 11
	secDataCount = 12
	pageSize     = 65536
	maxPages     = 65536 // 4 GiB, the wasm32 limit
)

// binary is what agenthost reads from a module's bytes before compiling it.
type binary struct {
	// manifest is the payload of the agenthost.manifest custom section, or
	// nil when the module has none.
	manifest []byte
	// memStart/memEnd bound the memory section (id byte included); 0,0 when
	// the module defines no memory.
	memStart, memEnd int
	// dataStart/dataEnd bound the data section the same way.
	dataStart, dataEnd int
	// dataCount is set when the module has a data count section: its code
	// may name data segments (memory.init, data.drop), so they keep their
	// numbering.
	dataCount bool
}

// checkHeader tells core modules from components and from non-wasm bytes.
func checkHeader(b []byte) error {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return ErrNotWasm
	}
	// A core module has version 1 (01 00 00 00); a component has a version
	// in the first two bytes and layer 1 in the next two (e.g. 0d 00 01 00).
	if b[6] == 1 && b[7] == 0 {
		return ErrComponent
	}
	if !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return fmt.Errorf("unsupported WebAssembly binary version % x; agenthost runs version 1 core modules", b[4:8])
	}
	return nil
}

// parseBinary walks the section headers of a core module.
func parseBinary(b []byte) (*binary, error) {
	if err := checkHeader(b); err != nil {
		return nil, err
	}
	out := &binary{}
	for off := 8; off < len(b); {
		start := off
		id := b[off]
		size, n, err := uleb32(b[off+1:])
		if err != nil {
			return nil, fmt.Errorf("section at offset %d: size: %w", start, err)
		}
		body := off + 1 + n
		end := body + int(size)
		if end > len(b) || end < body {
			return nil, fmt.Errorf("section %d at offset %d: size %d runs past the end of the file", id, start, size)
		}
		switch id {
		case secCustom:
			nameLen, m, err := uleb32(b[body:end])
			if err != nil || body+m+int(nameLen) > end {
				return nil, fmt.Errorf("custom section at offset %d: bad name", start)
			}
			name := string(b[body+m : body+m+int(nameLen)])
			if name == ManifestSection {
				if out.manifest != nil {
					return nil, fmt.Errorf("module has two %s custom sections", ManifestSection)
				}
				out.manifest = append([]byte{}, b[body+m+int(nameLen):end]...)
			}
		case secMemory:
			out.memStart, out.memEnd = start, end
		case secData:
			out.dataStart, out.dataEnd = start, end
		case secDataCount:
			out.dataCount = true
		}
		off = end
	}
	return out, nil
}

// limitMemory returns the module with its memory's maximum lowered to
// limitPages, so the engine refuses any growth past the plugin's limit. The
// input is not modified. A module whose initial memory already exceeds the
// limit is refused. The data segments are joined on the way (mergeData).
func limitMemory(b []byte, bin *binary, limitPages uint32) ([]byte, error) {
	if bin.memEnd == 0 {
		return b, nil
	}
	sec := b[bin.memStart:bin.memEnd]
	_, n, err := uleb32(sec[1:])
	if err != nil {
		return nil, fmt.Errorf("memory section: %w", err)
	}
	p := sec[1+n:]
	count, n, err := uleb32(p)
	if err != nil {
		return nil, fmt.Errorf("memory section: %w", err)
	}
	p = p[n:]
	if count == 0 {
		return b, nil
	}
	if count > 1 {
		return nil, fmt.Errorf("module defines %d memories; agenthost supports one", count)
	}
	if len(p) == 0 {
		return nil, errors.New("memory section: truncated")
	}
	flags := p[0]
	if flags > 1 {
		return nil, fmt.Errorf("memory flags 0x%02x (shared or 64-bit memory) are not supported", flags)
	}
	min, n, err := uleb32(p[1:])
	if err != nil {
		return nil, fmt.Errorf("memory section: minimum: %w", err)
	}
	max := uint32(maxPages)
	if flags == 1 {
		if max, _, err = uleb32(p[1+n:]); err != nil {
			return nil, fmt.Errorf("memory section: maximum: %w", err)
		}
	}
	if min > limitPages {
		return nil, fmt.Errorf("module needs %d MiB of memory at start, over its memory limit of %d MiB; raise limits.memory", uint64(min)*pageSize>>20, uint64(limitPages)*pageSize>>20)
	}
	if max > limitPages {
		max = limitPages
	}
	var body []byte
	body = appendUleb(body, 1)
	body = append(body, 1)
	body = appendUleb(body, min)
	body = appendUleb(body, max)
	out := make([]byte, 0, len(b)+8)
	out = append(out, b[:bin.memStart]...)
	out = append(out, secMemory)
	out = appendUleb(out, uint32(len(body)))
	out = append(out, body...)
	if data := mergeData(b, bin); data != nil {
		out = append(out, b[bin.memEnd:bin.dataStart]...)
		out = append(out, data...)
		out = append(out, b[bin.dataEnd:]...)
		return out, nil
	}
	out = append(out, b[bin.memEnd:]...)
	return out, nil
}

// mergeGap is the largest run of zero bytes mergeData writes to join two
// data segments.
const mergeGap = 4096

// dataSegment is an active data segment of memory 0 at a constant offset.
type dataSegment struct {
	off  uint32
	init []byte
}

// mergeData returns the module's data section (id byte and size included)
// with its segments joined into as few as hold the same bytes, or nil to
// keep the section as it is. Go's wasm linker cuts its data at every run of
// zeros into tens of thousands of segments (45,640 in core.wasm); the engine
// keeps each one as a heap object and copies them one by one into every new
// instance. Joining segments across gaps of at most mergeGap zero bytes
// leaves a fresh memory exactly as before, since memory starts zeroed and
// no other segment writes into a gap. Only the simple, unambiguous shape is
// rewritten: every segment active on memory 0 at an i32.const offset, none
// overlapping another, and no data count section (which code that names
// segments by index needs).
func mergeData(b []byte, bin *binary) []byte {
	if bin.dataEnd == 0 || bin.dataCount || bin.dataStart < bin.memEnd {
		return nil
	}
	_, n, err := uleb32(b[bin.dataStart+1:])
	if err != nil {
		return nil
	}
	p := b[bin.dataStart+1+n : bin.dataEnd]
	count, n, err := uleb32(p)
	if err != nil || count < 2 || uint64(count) > uint64(len(p)) {
		return nil
	}
	p = p[n:]
	segs := make([]dataSegment, 0, count)
	for range count {
		// 0x00 (active, memory 0), i32.const, a signed LEB128, end.
		if len(p) < 3 || p[0] != 0 || p[1] != 0x41 {
			return nil
		}
		off, n, err := sleb32(p[2:])
		if err != nil || len(p) < 3+n || p[2+n] != 0x0b {
			return nil
		}
		p = p[3+n:]
		size, n, err := uleb32(p)
		if err != nil || uint64(size) > uint64(len(p)-n) {
			return nil
		}
		segs = append(segs, dataSegment{off: uint32(off), init: p[n : n+int(size)]})
		p = p[n+int(size):]
	}
	if len(p) != 0 {
		return nil
	}
	slices.SortStableFunc(segs, func(a, b dataSegment) int { return cmp.Compare(a.off, b.off) })
	merged := 1
	for i := 1; i < len(segs); i++ {
		prevEnd := uint64(segs[i-1].off) + uint64(len(segs[i-1].init))
		if uint64(segs[i].off) < prevEnd {
			return nil // overlapping segments: their order matters
		}
		if uint64(segs[i].off)-prevEnd > mergeGap {
			merged++
		}
	}
	if merged == len(segs) {
		return nil
	}
	var body []byte
	body = appendUleb(body, uint32(merged))
	for i := 0; i < len(segs); {
		j, end := i+1, uint64(segs[i].off)+uint64(len(segs[i].init))
		for j < len(segs) && uint64(segs[j].off)-end <= mergeGap {
			end = uint64(segs[j].off) + uint64(len(segs[j].init))
			j++
		}
		if end-uint64(segs[i].off) > 1<<30 {
			return nil
		}
		size := uint32(end - uint64(segs[i].off))
		body = append(body, 0, 0x41)
		body = appendSleb32(body, int32(segs[i].off))
		body = append(body, 0x0b)
		body = appendUleb(body, size)
		start := len(body)
		body = append(body, make([]byte, size)...)
		for _, s := range segs[i:j] {
			copy(body[start+int(s.off-segs[i].off):], s.init)
		}
		i = j
	}
	out := make([]byte, 0, len(body)+6)
	out = append(out, secData)
	out = appendUleb(out, uint32(len(body)))
	return append(out, body...)
}

func uleb32(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, errors.New("truncated LEB128")
		}
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0, errors.New("LEB128 overflows 32 bits")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}

// sleb32 reads a signed LEB128 of at most 32 bits.
func sleb32(b []byte) (int32, int, error) {
	var v int64
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, errors.New("truncated LEB128")
		}
		c := b[i]
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << (7 * (i + 1))
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, 0, errors.New("LEB128 overflows 32 bits")
			}
			return int32(v), i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}

func appendSleb32(b []byte, v int32) []byte {
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

func appendUleb(b []byte, v uint32) []byte {
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
