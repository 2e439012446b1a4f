package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseMountFlag reads --mount HOST:GUEST[:ro|rw]: the guest after the
// last ":/", a host path with a colon, the mode left empty for the default,
// HOST made absolute; a spec without an absolute guest, a host that does
// not exist or is a file are refused, naming the form or the host.
func TestParseMountFlag(t *testing.T) {
	dir := t.TempDir()
	colon := filepath.Join(dir, "a:b")
	if err := os.Mkdir(colon, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec string
		want Mount
	}{
		{dir + ":/workspace", Mount{Host: dir, Guest: "/workspace"}},
		{dir + ":/workspace:rw", Mount{Host: dir, Guest: "/workspace", Mode: MountRW}},
		{dir + ":/w:ro", Mount{Host: dir, Guest: "/w", Mode: MountRO}},
		{colon + ":/data", Mount{Host: colon, Guest: "/data"}},
	} {
		m, err := ParseMountFlag(tc.spec)
		if err != nil || m != tc.want {
			t.Errorf("ParseMountFlag(%q) = %+v, %v; want %+v", tc.spec, m, err, tc.want)
		}
	}
	t.Chdir(dir)
	if m, err := ParseMountFlag(".:/workspace"); err != nil || m.Host != dir {
		t.Errorf("ParseMountFlag(.:/workspace) = %+v, %v; want the host %s", m, err, dir)
	}
	for spec, want := range map[string]string{
		dir + ":workspace": "use HOST:GUEST[:ro|rw]",
		"/workspace":       "use HOST:GUEST[:ro|rw]",
		dir + "/none:/w":   "the host directory " + dir + "/none: no such file or directory",
		file + ":/w":       file + " is not a directory",
	} {
		if _, err := ParseMountFlag(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMountFlag(%q) = %v, want an error with %q", spec, err, want)
		}
	}
}
