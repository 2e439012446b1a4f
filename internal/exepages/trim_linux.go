// Package exepages gives back to the page cache the pages of the running
// executable that the process no longer needs.
package exepages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Trim drops the executable's read-only pages from the process's resident
// set. Package initialisation, the config and the plugin load touch code
// and read-only data all over the 50 MB binary (and the kernel maps 64 KiB
// around every page fault), about 24 MB of resident pages of which a run's
// steps use well under half; a builtin module's bytes (read-only data, 3 MB
// for core) are read once, to compile it. `run` trims before its first
// step; the plugin runtime before and after copying a large module to
// patch it, and after compiling it. Each read-only mapping of the
// executable that holds no private copy of a page (Anonymous: 0 kB, so its
// resident pages are the file's own) is dropped with MADV_DONTNEED; the
// pages still needed fault back in from the page cache. A mapping with
// private pages (relocated data in a position-independent build, a
// debugger's breakpoints) is left alone. Errors are ignored: this only
// saves memory.
func Trim() {
	once.Do(func() { spans = exeSpans() })
	for _, s := range spans {
		unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_DONTNEED)
	}
}

// span is an address range of the executable's mappings.
type span struct{ start, end uintptr }

var (
	once  sync.Once
	spans []span // what Trim drops, found once: the mappings do not change
)

// exeSpans finds the read-only mappings of the executable that hold no
// private pages. Reading smaps costs about a millisecond, so it is read
// once; relocations (the only private pages a normal run has there) are
// written before main starts.
func exeSpans() []span {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil
	}
	var drop []span
	var cur *span
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && !strings.HasSuffix(f[0], ":") && strings.Contains(f[0], "-") {
			cur = nil
			if len(f) == 6 && f[5] == exe && (f[1] == "r-xp" || f[1] == "r--p") {
				lo, hi, _ := strings.Cut(f[0], "-")
				s, err1 := strconv.ParseUint(lo, 16, 64)
				e, err2 := strconv.ParseUint(hi, 16, 64)
				if err1 == nil && err2 == nil && e > s {
					drop = append(drop, span{uintptr(s), uintptr(e)})
					cur = &drop[len(drop)-1]
				}
			}
			continue
		}
		if cur != nil && len(f) >= 2 && f[0] == "Anonymous:" && f[1] != "0" {
			drop = drop[:len(drop)-1] // private pages: keep the mapping as it is
			cur = nil
		}
	}
	return drop
}
