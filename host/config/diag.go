package config

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

const (
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// WriteDiagnostics prints diags in the compiler style:
//
//	agents.hcl:12:11: error: Invalid steps
//	  12 |   steps = 0
//	     |           ^
//	steps must be at least 1; steps = 1 makes a text-only agent (no tools).
//
// The header comes from Subject.Start, the file named relative to the
// working directory when that is shorter; the snippet is the source line
// with carets under the subject (files not in files are read from disk);
// the Detail follows as the hint. Diagnostics are separated by a blank
// line. With color, the header is bold and the severity red or yellow.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool) {
	cwd, _ := os.Getwd()
	sources := map[string][]byte{}
	source := func(name string) []byte {
		if src, ok := sources[name]; ok {
			return src
		}
		var src []byte
		if f, ok := files[name]; ok && f != nil {
			src = f.Bytes
		} else if b, err := os.ReadFile(name); err == nil {
			src = b
		}
		sources[name] = src
		return src
	}
	var buf bytes.Buffer
	for i, d := range diags {
		if i > 0 {
			buf.WriteByte('\n')
		}
		sev, sevColor := "error", ansiRed
		if d.Severity == hcl.DiagWarning {
			sev, sevColor = "warning", ansiYellow
		}
		header := ""
		if d.Subject != nil {
			header = fmt.Sprintf("%s:%d:%d: ", shortPath(cwd, d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
		}
		if color {
			fmt.Fprintf(&buf, "%s%s%s%s:%s%s %s%s\n", ansiBold, header, sevColor, sev, ansiReset, ansiBold, d.Summary, ansiReset)
		} else {
			fmt.Fprintf(&buf, "%s%s: %s\n", header, sev, d.Summary)
		}
		if d.Subject != nil {
			src := source(d.Subject.Filename)
			if sec, ok := d.Extra.(secretValue); ok {
				src = masked(src, sec.Range)
			}
			writeSnippet(&buf, src, *d.Subject, color, sevColor)
		}
		if detail := strings.TrimSpace(d.Detail); detail != "" {
			buf.WriteString(detail)
			buf.WriteByte('\n')
		}
	}
	w.Write(buf.Bytes())
}

// secretValue is the Extra of a diagnostic about a secret written in the
// file: its snippet shows the value at Range masked, never the secret.
type secretValue struct{ Range hcl.Range }

// masked is a copy of src with the characters of r, but for quotes and
// line ends, replaced by '*': one byte for one, so that the columns stay.
func masked(src []byte, r hcl.Range) []byte {
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte >= r.End.Byte {
		return src
	}
	out := bytes.Clone(src)
	for i := r.Start.Byte; i < r.End.Byte; i++ {
		if c := out[i]; c != '"' && c != '\n' && c != '\r' {
			out[i] = '*'
		}
	}
	return out
}

// shortPath is name relative to cwd when that is shorter.
func shortPath(cwd, name string) string {
	if cwd == "" || !filepath.IsAbs(name) {
		return name
	}
	if rel, err := filepath.Rel(cwd, name); err == nil && len(rel) < len(name) {
		return rel
	}
	return name
}

// writeSnippet prints the line of r.Start and a caret line under the part
// of r on that line.
func writeSnippet(buf *bytes.Buffer, src []byte, r hcl.Range, color bool, caretColor string) {
	start := r.Start.Byte
	if src == nil || start < 0 || start > len(src) {
		return
	}
	lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		lineEnd = start + i
	}
	line := strings.TrimRight(string(src[lineStart:lineEnd]), "\r")
	end := min(max(r.End.Byte, start), lineStart+len(line))

	num := strconv.Itoa(r.Start.Line)
	gutter := strings.Repeat(" ", len(num))
	fmt.Fprintf(buf, "  %s | %s\n", num, line)

	// Pad with the same whitespace (tabs stay tabs) so the caret lines up.
	var pad strings.Builder
	for _, c := range string(src[lineStart:start]) {
		if c == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	width := 1
	if end > start {
		width = max(1, utf8.RuneCount(src[start:end]))
	}
	carets := strings.Repeat("^", width)
	if color {
		carets = caretColor + carets + ansiReset
	}
	fmt.Fprintf(buf, "  %s | %s%s\n", gutter, pad.String(), carets)
}
