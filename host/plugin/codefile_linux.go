package plugin

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"golang.org/x/sys/unix"
)

// fileBackCode maps cm's machine code from a file of the cache (see
// codefile.go), named by the module's sha256 and its memory pages, and
// reports whether it did. Nothing changes without a cache directory or a
// sum, when the machine code cannot be found, or when the file cannot be
// written or mapped (a cache on a file system mounted noexec, a policy
// refusing executable file mappings): the code then stays in its
// anonymous mapping.
//
// The file is compared with the code byte for byte and written afresh
// when it is missing, not private or different, and it is mapped only
// after that: the mapping holds what wazero produced. Cache files are
// never rewritten in place (a new one is renamed over the old), so a
// mapping keeps the contents it was checked with; only the user (or root)
// can change a file of the private cache, and they can change the running
// process anyway (docs/security.md).
func (r *Runtime) fileBackCode(cm wazero.CompiledModule, sum string, pages uint32) bool {
	if r.cacheDir == "" || sum == "" {
		return false
	}
	code := machineCode(cm)
	page := uintptr(os.Getpagesize())
	if code == nil || uintptr(unsafe.Pointer(&code[0]))%page != 0 {
		return false
	}
	// The mapping's whole pages: wazero's mapping is zero past the code.
	n := (uintptr(len(code)) + page - 1) / page * page
	mem := unsafe.Slice(&code[0], n)
	// Code mapped already is not read again: comparing it would fault all
	// of it in. (Another module's code could take the same place once
	// wazero has unmapped this one; it then stays where wazero put it.)
	key := [2]uintptr{uintptr(unsafe.Pointer(&code[0])), n}
	r.codeMu.Lock()
	defer r.codeMu.Unlock()
	if r.fileBacked[key] {
		return true
	}
	path := filepath.Join(r.cacheDir, codeDir, sum+"."+strconv.FormatUint(uint64(pages), 10)+"."+codeFormat)
	f := openCacheFile(path, int64(n), codeBytes(mem))
	if f == nil {
		return false
	}
	defer f.Close()
	if !mapCodeFile(mem, f) {
		return false
	}
	if r.fileBacked == nil {
		r.fileBacked = map[[2]uintptr]bool{}
	}
	r.fileBacked[key] = true
	return true
}

// mapCodeFile maps f, which holds what mem holds, over mem (page aligned,
// read and executable), and reports whether it did.
func mapCodeFile(mem []byte, f *os.File) bool {
	const prot = unix.PROT_READ | unix.PROT_EXEC
	// A first mapping somewhere else checks what can refuse it (noexec,
	// security policy, the file system's own mmap) without touching mem.
	probe, err := unix.Mmap(int(f.Fd()), 0, len(mem), prot, unix.MAP_PRIVATE)
	if err != nil {
		return false
	}
	unix.Munmap(probe)
	addr := uintptr(unsafe.Pointer(&mem[0]))
	_, _, errno := unix.Syscall6(unix.SYS_MMAP, addr, uintptr(len(mem)), prot, unix.MAP_PRIVATE|unix.MAP_FIXED, f.Fd(), 0)
	if errno == 0 {
		return true
	}
	// Kernels before 6.12 may have unmapped mem before failing: put the
	// code back in an anonymous mapping of its own.
	_, _, errno = unix.Syscall6(unix.SYS_MMAP, addr, uintptr(len(mem)), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0)
	if errno == 0 {
		if _, err := f.ReadAt(mem, 0); err == nil && unix.Mprotect(mem, prot) == nil {
			return false
		}
	}
	panic("agenthost: the machine code of a plugin could not be mapped back after a failed mapping of its cache file")
}

// codeBytes is machine code as a cacheSource.
type codeBytes []byte

// sameAs compares f with c in chunks of a small buffer: reading a code
// file into memory whole, or mapping it, would add its size to the
// resident set at the compile, a run's peak.
func (c codeBytes) sameAs(f *os.File) bool {
	var buf [64 << 10]byte
	for off := 0; off < len(c); {
		n := min(len(buf), len(c)-off)
		if _, err := io.ReadFull(f, buf[:n]); err != nil || !bytes.Equal(buf[:n], c[off:off+n]) {
			return false
		}
		off += n
	}
	k, _ := f.Read(buf[:1])
	return k == 0
}

func (c codeBytes) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(c)
	return int64(n), err
}
