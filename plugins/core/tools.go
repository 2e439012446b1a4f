package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
			return errors.New(show + ": no file system is mounted at " + w.root + "; the agent's configuration must grant a mount there (mount { guest = " + strconv.Quote(w.root) + " })")
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New(show + ": not found (paths are relative to " + w.root + "; use list_dir to see what exists)")
	case errors.Is(err, syscall.EROFS):
		return errors.New(show + ": the workspace is mounted read-only; writing is not allowed")
	case errors.Is(err, syscall.ENOSYS): // wazero's read-only mounts refuse writes so
		return errors.New(show + ": the workspace file system does not support this operation (it is probably mounted read-only)")
	case errors.Is(err, fs.ErrPermission):
		return errors.New(show + ": permission denied (the mount may be read-only)")
	case errors.Is(err, syscall.ENOTDIR):
		return errors.New(show + ": a parent of this path is a file, not a directory")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errors.New(show + ": " + err.Error())
}

// readText reads a regular text file of at most maxFileSize bytes. The
// bytes are readAll's: valid until the next read.
func (w *workspace) readText(abs, show string) ([]byte, fs.FileInfo, error) {
	info, err := os.Stat(abs)
	if err != nil {
		return nil, nil, w.fsError(show, err)
	}
	if info.IsDir() {
		return nil, nil, errors.New(show + ": is a directory; use list_dir to list it")
	}
	if !info.Mode().IsRegular() {
		return nil, nil, errors.New(show + ": not a regular file")
	}
	if info.Size() > maxFileSize {
		return nil, nil, errors.New(show + ": too large (" + size(info.Size()) + ", over the " + size(maxFileSize) + " limit); use search to find the lines you need")
	}
	data, err := readAll(abs, info.Size())
	if err != nil {
		return nil, nil, w.fsError(show, err)
	}
	if len(data) > maxFileSize { // grew since Stat
		return nil, nil, errors.New(show + ": too large (over the " + size(maxFileSize) + " limit)")
	}
	if isBinary(data) {
		return nil, nil, errors.New(show + ": looks like a binary file (it contains NUL bytes); only text files can be read")
	}
	return data, info, nil
}

// readBuf holds the last file readAll read, when it fitted keepReadBuf
// bytes. A reused instance serves call after call, and a Go guest below its
// first collection's heap goal (4 MB) does not collect: every call's
// garbage is new memory, and a wasm memory never shrinks. A file read into
// a fresh slice would be most of a read_file call's garbage, and the guest
// memory of a long-lived instance would grow by that much every call. A
// bigger file gets a slice of its own, so a large read is not kept live.
var readBuf []byte

const keepReadBuf = 64 << 10

// readAll reads the file at path, size bytes when it was stat'ed, into
// readBuf when it fits: the result is only valid until the next readAll.
func readAll(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf []byte
	if size < keepReadBuf {
		if int64(cap(readBuf)) < size+512 {
			readBuf = make([]byte, 0, size+512) // 512: room to see the end
		}
		buf = readBuf[:0]
	} else {
		buf = make([]byte, 0, min(size, maxFileSize)+512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grew since Stat
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) > maxFileSize {
			return buf, nil // the caller refuses it
		}
	}
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
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
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
		return "", errors.New("read_file: offset (" + itoa(a.Offset) + ") and limit (" + itoa(a.Limit) + ") must be at least 1")
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
	// (scan.go), not by splitting the whole file (lines): in the guest
	// splitting would be most of a call's cost, whatever the window shown.
	// The numbering is lines's.
	body := bytes.TrimSuffix(data, []byte("\n"))
	total := countNewlines(body) + 1
	start := max(a.Offset, 1)
	if start > total {
		return "", errors.New(show + ": offset " + itoa(start) + " is past the end of the file (" + itoa(total) + " lines)")
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
		line := padLeft(itoa(n), 6) + "\t" + clip(text, maxLineLen) + "\n"
		if b.Len()+len(line) > maxOutput && n > start {
			end = n - 1
			break
		}
		b.WriteString(line)
	}
	if end < total {
		b.WriteString("(showing lines " + itoa(start) + "-" + itoa(end) + " of " + itoa(total) + "; call read_file with offset " + itoa(end+1) + " to continue)\n")
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
		return "", errors.New("write_file: path " + strconv.Quote(a.Path) + " is the workspace directory itself; name a file")
	}
	verb := "created"
	if info, err := os.Stat(abs); err == nil {
		if info.IsDir() {
			return "", errors.New(show + ": is a directory; name a file to write")
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
	return verb + " " + show + " (" + itoa(len(*a.Content)) + " bytes)", nil
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
		return "", errors.New(show + ": not a directory; use read_file to read a file")
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
		text += "(stopped after " + itoa(maxEntries) + " entries; list a subdirectory to see more)\n"
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
		return "", errors.New("search: max_results (" + itoa(a.MaxResults) + ") must be at least 1")
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
		return "", errors.New("search: invalid regexp " + strconv.Quote(a.Pattern) + ": " + err.Error())
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
			hit := rel + ":" + itoa(i+1) + ": " + clip(line, maxHitLineLen) + "\n"
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
		b.WriteString("(stopped after reading " + itoa(maxSearchFiles) + " files; search a subdirectory to cover the rest)\n")
	}
	if hits == 0 {
		msg := "no matches for " + strconv.Quote(a.Pattern) + " under " + show
		if tooMany {
			msg += " " + strings.TrimSuffix(b.String(), "\n")
		}
		return msg, nil
	}
	if full {
		b.WriteString("(stopped after " + itoa(hits) + " matches; narrow the path or the pattern, or raise max_results)\n")
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
		return "", errors.New(show + ": old_string not found; it must match the file exactly, whitespace included (read_file shows the current text)")
	case 1:
	default:
		return "", errors.New(show + ": old_string found " + itoa(n) + " times, make old_string unique by including more surrounding lines")
	}
	i := strings.Index(text, a.OldString)
	text = text[:i] + *a.NewString + text[i+len(a.OldString):]
	if err := os.WriteFile(abs, []byte(text), info.Mode().Perm()); err != nil {
		return "", w.fsError(show, err)
	}
	first := strings.Count(text[:i], "\n") + 1
	last := first + strings.Count(*a.NewString, "\n")
	if last > first {
		return "edited " + show + ": replaced 1 occurrence, now lines " + itoa(first) + "-" + itoa(last), nil
	}
	return "edited " + show + ": replaced 1 occurrence at line " + itoa(first), nil
}

var itoa = strconv.Itoa

// padLeft right-aligns s in a field of n bytes, as fmt's %6d does.
func padLeft(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}
