package rootfs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestExchangeRace swaps a real directory and a symbolic link to the
// protected data directory atomically (renameat2 RENAME_EXCHANGE), behind
// the guest's back, while the guest writes through the name: the check of
// each directory handle against the entry seen catches every swap.
func TestExchangeRace(t *testing.T) {
	pr := newProject(t)
	f := pr.fs(t)
	d, link := filepath.Join(pr.ws, "d"), filepath.Join(pr.ws, "dlink")
	must(t, os.Mkdir(d, 0o755))
	must(t, os.WriteFile(filepath.Join(d, "code"), nil, 0o644))
	must(t, os.Symlink(".agenthost/cache/wazero-x", link))
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				if of, e := f.OpenFile("d/code", wronly|trunc, 0); e == 0 {
					of.Write([]byte("pwned"))
					of.Close()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-swapped
	pr.unchanged(t)
}
