package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Limits of the tools. They keep one result well under the host's default
// 1 MiB output cap and the model's context.
const (
	maxFileSize   = 4 << 20   // bytes; read_file, edit and search refuse or skip bigger files
	maxReadLines  = 2000      // lines per read_file call
	maxLineLen    = 2000      // bytes of one line shown by read_file
	maxOutput     = 128 << 10 // bytes of text in one result; JSON escaping can grow it up to 6x
	maxEntries    = 1000      // list_dir entries
	defaultHits   = 100       // search matches by default
	maxHits       = 1000      // search matches at most
	maxHitLineLen = 300       // bytes of one line shown by search
	binarySniff   = 8000      // bytes looked at for a NUL to call a file binary
)

// maxSearchFiles caps the files one search reads, so a huge tree ends in a
// clear message rather than the host's timeout. A variable for tests.
var maxSearchFiles = 20000

// workspace resolves and confines paths to root, the guest directory of the
// mount (/workspace in the plugin, a temporary directory in tests). The host
// sandbox is what really confines the plugin; the checks here give the model
// clear messages instead of bare "not found" errors.
type workspace struct {
	root string
	// mounts are all the directories the tools may reach, root first
	// (mounts.go); nil means root alone.
	mounts []string
}

// resolve returns the absolute path for p and the path to show the model
// (relative to root, "." for root itself; absolute under another mount).
// Relative paths resolve against root; absolute paths must be under one of
// the mounts.
func (w *workspace) resolve(p string) (abs, show string, err error) {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(w.root, p)
	}
	m := w.mountOf(abs)
	if m == "" {
		return "", "", w.outside(p)
	}
	if m != w.root {
		// Under another mount: show the absolute path, which the model
		// can pass back as it is.
		return abs, filepath.ToSlash(abs), nil
	}
	rel, _ := filepath.Rel(w.root, abs)
	return abs, filepath.ToSlash(rel), nil
}

// fsError turns an error from the file system into a message naming the
// path and saying what to do.
func (w *workspace) fsError(show string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EBADF) {
		// Without a mount, WASI runtimes report paths under it as missing or
		// as bad file descriptors (no preopen); say what is really wrong.
		if _, serr := os.Stat(w.root); serr != nil {
			return fmt.Errorf("%s: no file system is mounted at %s; the agent's configuration must grant a mount there (mount { guest = %q })", show, w.root, w.root)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: not found (paths are relative to %s; use list_dir to see what exists)", show, w.root)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%s: the workspace is mounted read-only; writing is not allowed", show)
	case errors.Is(err, syscall.ENOSYS): // wazero's read-only mounts refuse writes so
		return fmt.Errorf("%s: the workspace file system does not support this operation (it is probably mounted read-only)", show)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied (the mount may be read-only)", show)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s: a parent of this path is a file, not a directory", show)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", show, err)
}

// readText reads a regular text file of at most maxFileSize bytes.
func (w *workspace) readText(abs, show string) ([]byte, fs.FileInfo, error) {
	info, err := os.Stat(abs)
	if err != nil {
		return nil, nil, w.fsError(show, err)
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory; use list_dir to list it", show)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", show)
	}
	if info.Size() > maxFileSize {
		return nil, nil, fmt.Errorf("%s: too large (%s, over the %s limit); use search to find the lines you need", show, size(info.Size()), size(maxFileSize))
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, w.fsError(show, err)
	}
	if len(data) > maxFileSize { // grew since Stat
		return nil, nil, fmt.Errorf("%s: too large (over the %s limit)", show, size(maxFileSize))
	}
	if isBinary(data) {
		return nil, nil, fmt.Errorf("%s: looks like a binary file (it contains NUL bytes); only text files can be read", show)
	}
	return data, info, nil
}

func isBinary(data []byte) bool {
	return hasNUL(data[:min(len(data), binarySniff)])
}

// lines splits text into lines without their line endings ("\n" or "\r\n").
// A final line ending does not start another line.
func lines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// clip shortens s to at most n bytes on a rune boundary, with a marker.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " … [line truncated]"
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

type readFileArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (w *workspace) readFile(a readFileArgs) (string, error) {
	if a.Path == "" {
		return "", errors.New("read_file: path is required")
	}
	if a.Offset < 0 || a.Limit < 0 {
		return "", fmt.Errorf("read_file: offset (%d) and limit (%d) must be at least 1", a.Offset, a.Limit)
	}
	abs, show, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	data, _, err := w.readText(abs, show)
	if err != nil {
		return "", err
	}
	if len(data) == 0 {
		return show + " is empty", nil
	}
	// The lines are found by scanning for the ones shown, a word at a time
	// (scan.go), not by splitting the whole file (lines): in the guest that
	// was ~0.3 ms for a 300-line file, most of a call's cost. The numbering
	// is lines's.
	body := bytes.TrimSuffix(data, []byte("\n"))
	total := countNewlines(body) + 1
	start := max(a.Offset, 1)
	if start > total {
		return "", fmt.Errorf("%s: offset %d is past the end of the file (%d lines)", show, start, total)
	}
	limit := a.Limit
	if limit == 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	end := min(start-1+limit, total) // last line shown, 1-based
	pos := skipLines(body, start-1)
	var b strings.Builder
	for n := start; n <= end; n++ {
		next := len(body)
		if i := indexNewline(body[pos:]); i >= 0 {
			next = pos + i
		}
		text := string(bytes.TrimSuffix(body[pos:next], []byte("\r")))
		pos = next + 1
		line := fmt.Sprintf("%6d\t%s\n", n, clip(text, maxLineLen))
		if b.Len()+len(line) > maxOutput && n > start {
			end = n - 1
			break
		}
		b.WriteString(line)
	}
	if end < total {
		fmt.Fprintf(&b, "(showing lines %d-%d of %d; call read_file with offset %d to continue)\n", start, end, total, end+1)
	}
	return b.String(), nil
}

type writeFileArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (w *workspace) writeFile(a writeFileArgs) (string, error) {
	if a.Path == "" {
		return "", errors.New("write_file: path is required")
	}
	if a.Content == nil {
		return "", errors.New("write_file: content is required (use \"\" for an empty file)")
	}
	abs, show, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	if show == "." {
		return "", fmt.Errorf("write_file: path %q is the workspace directory itself; name a file", a.Path)
	}
	verb := "created"
	if info, err := os.Stat(abs); err == nil {
		if info.IsDir() {
			return "", fmt.Errorf("%s: is a directory; name a file to write", show)
		}
		verb = "overwrote"
	}
	if _, err := os.Stat(w.root); err != nil {
		return "", w.fsError(show, err) // no mount: do not create the root
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", w.fsError(filepath.ToSlash(filepath.Dir(show)), err)
	}
	if err := os.WriteFile(abs, []byte(*a.Content), 0o644); err != nil {
		return "", w.fsError(show, err)
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, show, len(*a.Content)), nil
}

type listDirArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func (w *workspace) listDir(a listDirArgs) (string, error) {
	abs, show, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", w.fsError(show, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s: not a directory; use read_file to read a file", show)
	}
	var out []string
	truncated := false
	add := func(p string, isDir bool) bool {
		if len(out) == maxEntries {
			truncated = true
			return false
		}
		rel := filepath.ToSlash(filepath.Join(show, p))
		if isDir {
			rel += "/"
		}
		out = append(out, rel)
		return true
	}
	if a.Recursive {
		err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if p == abs {
				return err
			}
			rel, _ := filepath.Rel(abs, p)
			if err != nil {
				// An unreadable subdirectory: list it, skip its contents.
				if !add(rel, true) {
					return filepath.SkipAll
				}
				return filepath.SkipDir
			}
			if !add(rel, d.IsDir()) {
				return filepath.SkipAll
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		})
	} else {
		var entries []os.DirEntry
		entries, err = os.ReadDir(abs)
		for _, e := range entries {
			if !add(e.Name(), e.IsDir()) {
				break
			}
		}
	}
	if err != nil {
		return "", w.fsError(show, err)
	}
	if len(out) == 0 {
		return show + "/ is empty", nil
	}
	text := strings.Join(out, "\n") + "\n"
	if truncated {
		text += fmt.Sprintf("(stopped after %d entries; list a subdirectory to see more)\n", maxEntries)
	}
	return text, nil
}

type searchArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Regexp          bool   `json:"regexp"`
	CaseInsensitive bool   `json:"case_insensitive"`
	MaxResults      int    `json:"max_results"`
}

func (w *workspace) search(a searchArgs) (string, error) {
	if a.Pattern == "" {
		return "", errors.New("search: pattern is required")
	}
	if a.MaxResults < 0 {
		return "", fmt.Errorf("search: max_results (%d) must be at least 1", a.MaxResults)
	}
	limit := a.MaxResults
	if limit == 0 {
		limit = defaultHits
	}
	limit = min(limit, maxHits)
	expr := a.Pattern
	if !a.Regexp {
		expr = regexp.QuoteMeta(expr)
	}
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("search: invalid regexp %q: %w", a.Pattern, err)
	}
	abs, show, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", w.fsError(show, err)
	}

	var b strings.Builder
	hits, files := 0, 0
	full, tooMany := false, false
	searchFile := func(p, rel string) {
		info, err := os.Stat(p)
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxFileSize {
			return
		}
		data, err := os.ReadFile(p)
		if err != nil || isBinary(data) {
			return
		}
		for i, line := range lines(data) {
			if !re.MatchString(line) {
				continue
			}
			hit := fmt.Sprintf("%s:%d: %s\n", rel, i+1, clip(line, maxHitLineLen))
			if hits == limit || b.Len()+len(hit) > maxOutput {
				full = true
				return
			}
			b.WriteString(hit)
			hits++
		}
	}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == abs {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != abs {
				return filepath.SkipDir
			}
			return nil
		}
		if files == maxSearchFiles {
			tooMany = true
			return filepath.SkipAll
		}
		files++
		rel := show
		if p != abs {
			r, _ := filepath.Rel(abs, p)
			rel = filepath.ToSlash(filepath.Join(show, r))
		}
		searchFile(p, rel)
		if full {
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", w.fsError(show, err)
	}
	if tooMany {
		fmt.Fprintf(&b, "(stopped after reading %d files; search a subdirectory to cover the rest)\n", maxSearchFiles)
	}
	if hits == 0 {
		msg := fmt.Sprintf("no matches for %q under %s", a.Pattern, show)
		if tooMany {
			msg += " " + strings.TrimSuffix(b.String(), "\n")
		}
		return msg, nil
	}
	if full {
		fmt.Fprintf(&b, "(stopped after %d matches; narrow the path or the pattern, or raise max_results)\n", hits)
	}
	return b.String(), nil
}

type editArgs struct {
	Path      string  `json:"path"`
	OldString string  `json:"old_string"`
	NewString *string `json:"new_string"`
}

func (w *workspace) edit(a editArgs) (string, error) {
	if a.Path == "" {
		return "", errors.New("edit: path is required")
	}
	if a.OldString == "" {
		return "", errors.New("edit: old_string is required and must not be empty; use write_file to create a file")
	}
	if a.NewString == nil {
		return "", errors.New("edit: new_string is required (use \"\" to delete old_string)")
	}
	if a.OldString == *a.NewString {
		return "", errors.New("edit: old_string and new_string are identical; nothing to change")
	}
	abs, show, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	data, info, err := w.readText(abs, show)
	if err != nil {
		return "", err
	}
	text := string(data)
	switch n := strings.Count(text, a.OldString); n {
	case 0:
		return "", fmt.Errorf("%s: old_string not found; it must match the file exactly, whitespace included (read_file shows the current text)", show)
	case 1:
	default:
		return "", fmt.Errorf("%s: old_string found %d times, make old_string unique by including more surrounding lines", show, n)
	}
	i := strings.Index(text, a.OldString)
	text = text[:i] + *a.NewString + text[i+len(a.OldString):]
	if err := os.WriteFile(abs, []byte(text), info.Mode().Perm()); err != nil {
		return "", w.fsError(show, err)
	}
	first := strings.Count(text[:i], "\n") + 1
	last := first + strings.Count(*a.NewString, "\n")
	if last > first {
		return fmt.Sprintf("edited %s: replaced 1 occurrence, now lines %d-%d", show, first, last), nil
	}
	return fmt.Sprintf("edited %s: replaced 1 occurrence at line %d", show, first), nil
}
