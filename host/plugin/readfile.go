package plugin

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// ErrNotExist is ReadFile's error for a file that does not exist.
var ErrNotExist = fs.ErrNotExist

// ReadFile reads the regular file at abs, an absolute guest path, as the
// plugin's calls see it: through the mount whose guest path holds it (the
// longest), confined as the calls are. It refuses a path under no mount,
// anything but a regular file (a FIFO would block) and a file of more than
// max bytes; a file that does not exist is ErrNotExist. It is for the
// host's own look at a file a call names (the diff an approval question
// shows), not for the plugin.
func (p *Plugin) ReadFile(abs string, max int64) ([]byte, error) {
	abs = path.Clean(abs)
	var m *mountPoint
	var rel string
	for i := range p.mounts {
		mp := &p.mounts[i]
		r, ok := under(mp.guest, abs)
		if ok && (m == nil || len(mp.guest) > len(m.guest)) {
			m, rel = mp, r
		}
	}
	if m == nil || !path.IsAbs(abs) {
		return nil, fmt.Errorf("%s is under none of plugin %q's mounts", abs, p.name)
	}
	st, e := m.fs.Stat(rel)
	if e == experimentalsys.ENOENT {
		return nil, ErrNotExist
	}
	if e != 0 {
		return nil, fmt.Errorf("%s: %w", abs, e)
	}
	if !st.Mode.IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", abs)
	}
	if st.Size > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", abs, max)
	}
	f, e := m.fs.OpenFile(rel, experimentalsys.O_RDONLY|experimentalsys.O_NONBLOCK, 0)
	if e != 0 {
		return nil, fmt.Errorf("%s: %w", abs, e)
	}
	defer f.Close()
	// Read one byte more than max: a file that grew since Stat is refused.
	buf := make([]byte, 0, min(st.Size, max)+1)
	for int64(len(buf)) <= max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, e := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if e != 0 {
			return nil, fmt.Errorf("%s: %w", abs, e)
		}
		if n == 0 {
			return buf, nil
		}
	}
	return nil, fmt.Errorf("%s is larger than %d bytes", abs, max)
}

// under returns abs relative to the mount guest path m ("." for m itself)
// when abs is m or below it; both are clean.
func under(m, abs string) (string, bool) {
	switch {
	case abs == m:
		return ".", true
	case m == "/":
		return strings.TrimPrefix(abs, "/"), true
	case strings.HasPrefix(abs, m+"/"):
		return abs[len(m)+1:], true
	}
	return "", false
}
