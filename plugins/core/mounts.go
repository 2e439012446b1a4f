package main

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
)

// newWorkspace is the workspace over the mounts core was granted, in mount
// order: relative paths resolve against the first; absolute paths may be
// under any. With no mount it assumes /workspace, so the messages say what
// to mount.
func newWorkspace(roots []string) *workspace {
	if len(roots) == 0 {
		roots = []string{workspaceRoot}
	}
	return &workspace{root: roots[0], mounts: roots}
}

// mountOf returns the mount directory that holds abs (the longest match), or
// "" when none does.
func (w *workspace) mountOf(abs string) string {
	best := ""
	mounts := w.mounts
	if len(mounts) == 0 {
		mounts = []string{w.root}
	}
	for _, m := range mounts {
		rel, err := filepath.Rel(m, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if len(m) > len(best) {
			best = m
		}
	}
	return best
}

// outside is the error for a path under no mount.
func (w *workspace) outside(p string) error {
	if len(w.mounts) <= 1 {
		return errors.New("path " + strconv.Quote(p) + " is outside " + w.root + "; the tools can only reach files under " + w.root)
	}
	return errors.New("path " + strconv.Quote(p) + " is outside the mounted directories; the tools can only reach files under " + strings.Join(w.mounts, ", ") + " (relative paths start at " + w.root + ")")
}
