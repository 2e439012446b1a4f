package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// trimExecutable drops the executable's read-only pages from the
// process's resident set. Package initialisation, the config and the
// plugin load touch code and read-only data all over the binary (and the
// kernel maps a large block around every page fault), of which a run's
// steps use a small part; a builtin module's bytes (read-only data) are
// read once, to compile it. Each read-only mapping of the executable that
// holds no private copy of a page (Anonymous: 0 kB, so its resident pages
// are the file's own) is dropped with MADV_DONTNEED; the pages still
// needed fault back in from the page cache. A mapping with private pages
// (relocated data in a position-independent build, a debugger's
// breakpoints) is left alone. Errors are ignored: this only saves memory.
func trimExecutable() {
	exeOnce.Do(func() { exeSpans = readExeSpans() })
	for _, s := range exeSpans {
		unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_DONTNEED)
	}
}

// span is an address range of the executable's mappings.
type span struct{ start, end uintptr }

var (
	exeOnce  sync.Once
	exeSpans []span // what trimExecutable drops, found once: the mappings do not change
)

// readExeSpans finds the read-only mappings of the executable that hold no
// private pages. smaps is read once; relocations (the only private pages a
// normal run has there) are written before main starts.
func readExeSpans() []span {
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
