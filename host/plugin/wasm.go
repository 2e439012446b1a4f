package plugin

import (
	"bytes"
	"errors"
	"fmt"
)

// ManifestSection is the name of the custom section that carries an
// agenthost/1 manifest.
const ManifestSection = "agenthost.manifest"

// ErrComponent is returned for a WASI 0.2 (component model) binary.
var ErrComponent = errors.New("this is a WASI 0.2 component; agenthost runs WASI preview1 core modules; rebuild for wasm32-wasip1 (Go: GOOS=wasip1 GOARCH=wasm)")

// ErrNotWasm is returned for bytes that are not a WebAssembly binary.
var ErrNotWasm = errors.New("not a WebAssembly module (the file does not start with \\0asm)")

const (
	secCustom = 0
	secMemory = 5
	pageSize  = 65536
	maxPages  = 65536 // 4 GiB, the wasm32 limit
)

// binary is what agenthost reads from a module's bytes before compiling it.
type binary struct {
	// manifest is the payload of the agenthost.manifest custom section, or
	// nil when the module has none.
	manifest []byte
	// memStart/memEnd bound the memory section (id byte included); 0,0 when
	// the module defines no memory.
	memStart, memEnd int
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
		}
		off = end
	}
	return out, nil
}

// limitMemory returns the module with its memory's maximum lowered to
// limitPages, so the engine refuses any growth past the plugin's limit. The
// input is not modified. A module whose initial memory already exceeds the
// limit is refused.
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
	out = append(out, b[bin.memEnd:]...)
	return out, nil
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
