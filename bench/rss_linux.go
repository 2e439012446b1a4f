package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

// maxRSS is the peak resident set size of an ended process, in bytes
// (Linux reports it in KiB).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}

// peakMappings runs agenthost once more, reads /proc/PID/smaps every
// millisecond and prints the largest mappings of the sample with the most
// resident memory: what the peak RSS is made of.
func (b *bench) peakMappings(dir, cfg string, replies []fakemodel.Reply) error {
	cmd, srv, err := b.command(dir, cfg, replies)
	if err != nil {
		return err
	}
	defer srv.Close()
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	path := fmt.Sprintf("/proc/%d/smaps", cmd.Process.Pid)
	var peak []mapping
	var peakKB int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			fmt.Printf("  peak resident set of one run: %d kB (rusage: %.1f MB), largest mappings:\n", peakKB, mb(maxRSS(cmd.ProcessState)))
			for i, m := range peak {
				if i == 8 {
					break
				}
				fmt.Printf("  %8d kB  %s\n", m.rss, m.name)
			}
			return nil
		case <-tick.C:
			data, err := os.ReadFile(path)
			if err != nil {
				continue // the process is starting or has ended
			}
			ms, total := parseSmaps(data, b.bin)
			if total > peakKB {
				peak, peakKB = ms, total
			}
		}
	}
}

// mapping is one line of /proc/PID/smaps with its resident size.
type mapping struct {
	name string
	rss  int64 // kB
}

// parseSmaps reads smaps into mappings, largest first, named by what they
// hold, and their total resident size.
func parseSmaps(data []byte, bin string) ([]mapping, int64) {
	var ms []mapping
	var total int64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			name := "anonymous " + f[1]
			if len(f) >= 6 {
				name = f[1] + " " + f[5]
				if f[5] == bin {
					name = f[1] + " agenthost binary"
				}
			} else if f[1] == "r-xp" {
				name = "anonymous r-xp (compiled wasm code)"
			}
			ms = append(ms, mapping{name: name})
		case len(f) >= 2 && f[0] == "Rss:" && len(ms) > 0:
			n, _ := strconv.ParseInt(f[1], 10, 64)
			ms[len(ms)-1].rss = n
			total += n
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].rss > ms[j].rss })
	return ms, total
}

// dropPageCache writes the file at path back and drops its pages from the
// page cache, so the next runs fault them in as exec does from a cold
// cache. A file just written (the linker, cp, go install) sits in the page
// cache in large folios, and a fault on one maps the whole folio into the
// process: the same work then shows megabytes more of resident set,
// depending only on how the binary was last written or read.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
