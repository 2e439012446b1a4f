// Package callview shows a tool call to the person who decides whether it
// runs (an approval question on a terminal, `runs show`, an MCP client's
// form), so that what they see is what runs.
//
// The arguments are shown one top-level key per line at the key column
// ("  key: value"), keys sorted. A value that is short, on one line and
// fits the width is shown after its key, escaped (termtext.Line); any
// other value (several lines, a tab, longer than the line) is shown below
// its key, each of its lines behind a gutter ("    │ ", "    ┆ " where a
// long line goes on), cut to the width so that the terminal never wraps a
// part of it to the key column, escaped (termtext.Escape), and folded
// after MaxValueLines lines with its size. No part of a value can thus pass
// for a line of another key: only the host writes at the key column.
//
// A write_file or edit of the builtin core plugin is better shown as what
// it does to the file: a Change (the host reads the file through the
// plugin's mounts) is shown as a unified diff in the same gutter, folded
// after MaxDiffLines lines, in place of the arguments that make it.
package callview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/diff"
	"golang.org/x/text/width"

	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// Bounds of what is shown.
const (
	// DefaultWidth is the width assumed when the terminal's is not known.
	DefaultWidth = 80
	// MinWidth is the narrowest width laid out for; a narrower terminal
	// is laid out for this one.
	MinWidth = 60
	// MaxKeys is the number of top-level keys shown; the rest are counted.
	MaxKeys = 20
	// MaxKeyCells is the most cells a key takes; a longer one is cut.
	MaxKeyCells = 40
	// MaxValueLines is the number of screen lines one value is shown on
	// before it is folded with its size.
	MaxValueLines = 24
	// MaxDiffLines is the number of lines of a diff shown before it is
	// folded.
	MaxDiffLines = 60
	// MaxDiffBytes bounds the file contents a Change may diff (each of
	// the old and the new content); a larger one is shown as arguments.
	MaxDiffBytes = 1 << 20
)

// Gutters: the start of a value's line, and the rest of a line that was
// longer than the width.
const (
	keyIndent  = "  "
	gutter     = "    │ "
	gutterMore = "    ┆ "
)

// Change is what a call does to a file: for a write_file or edit, the
// file's content now and after the call.
type Change struct {
	// Exists is false for a file that does not exist yet (Old is empty).
	Exists bool
	// Old is the file's content now; New its content after the call.
	Old, New []byte
	// Replaces are the argument keys the change shows ("content";
	// "old_string", "new_string"): they are not shown apart.
	Replaces []string
}

// Arguments shows args, a call's argument text, for a person: one block
// per top-level key of a JSON object (see the package documentation),
// laid out for a terminal width cells wide (0: DefaultWidth). Arguments
// that are not a JSON object are shown as one value.
func Arguments(args string, width int) string { return Call(args, width, nil) }

// Call is Arguments with ch, when not nil, shown as a diff in place of
// the arguments it replaces.
func Call(args string, width int, ch *Change) string {
	v := &view{width: width}
	if v.width <= 0 {
		v.width = DefaultWidth
	}
	v.width = max(v.width, MinWidth) - 1 // a cell spare: no line ends at the margin
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		v.value("arguments", args)
		return v.sb.String()
	}
	if ch != nil && (len(ch.Old) > MaxDiffBytes || len(ch.New) > MaxDiffBytes) {
		ch = nil // too large to diff: the arguments are shown
	}
	skip := map[string]bool{}
	if ch != nil {
		for _, k := range ch.Replaces {
			skip[k] = true
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == MaxKeys {
			fmt.Fprintf(&v.sb, "%s… %d more keys\n", keyIndent, len(keys)-MaxKeys)
			break
		}
		raw := obj[k]
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var c bytes.Buffer
			if json.Compact(&c, raw) == nil {
				raw = c.Bytes()
			}
			s = string(raw)
		}
		v.value(k, s)
	}
	if len(obj) == 0 {
		v.sb.WriteString(keyIndent + "(no arguments)\n")
	}
	if ch != nil {
		v.change(ch)
	}
	return v.sb.String()
}

type view struct {
	sb    strings.Builder
	width int // cells a line may take
}

// value shows key and its value s.
func (v *view) value(key, s string) {
	head := keyIndent + clipCells(termtext.Line(textcut.Prefix(key, 4*MaxKeyCells)), min(MaxKeyCells, v.width-30)) + ": "
	if !strings.ContainsAny(s, "\n\t") && len(s) <= 4*v.width {
		one := termtext.Line(s)
		if s == "" || strings.TrimSpace(s) != s {
			one = `"` + one + `"` // spaces at an end, or nothing, made visible
		}
		if cells(head)+cells(one) <= v.width {
			v.sb.WriteString(head + one + "\n")
			return
		}
	}
	v.sb.WriteString(head + sizeOf(s) + "\n")
	v.block(s, MaxValueLines, func(shown, all int) string {
		return fmt.Sprintf("(%s in all; %d of %d lines shown)", bytesize.About(int64(len(s))), shown, all)
	})
}

// change shows ch as a diff, after the other arguments.
func (v *view) change(ch *Change) {
	if !ch.Exists {
		fmt.Fprintf(&v.sb, "%sdiff: a new file, %s:\n", keyIndent, sizeOf(string(ch.New)))
		v.block(string(ch.New), MaxDiffLines, func(shown, all int) string {
			return fmt.Sprintf("(%d of %d lines shown)", shown, all)
		})
		return
	}
	d := diff.Diff("now", ch.Old, "after", ch.New)
	if d == nil {
		fmt.Fprintf(&v.sb, "%sdiff: none, the file stays as it is (%s)\n", keyIndent, sizeOf(string(ch.Old)))
		return
	}
	// The header's three lines ("diff now after", "--- now", "+++ after")
	// say nothing the title does not.
	for range 3 {
		if i := bytes.IndexByte(d, '\n'); i >= 0 {
			d = d[i+1:]
		}
	}
	fmt.Fprintf(&v.sb, "%sdiff: the file now (%s) and after the call (%s):\n", keyIndent, sizeOf(string(ch.Old)), sizeOf(string(ch.New)))
	v.block(string(d), MaxDiffLines, func(shown, all int) string {
		return fmt.Sprintf("(%d of %d lines of the diff shown)", shown, all)
	})
}

// block shows the lines of s behind the gutter, each cut to the width,
// at most most screen lines; past them a line "… " + fold(shown, all),
// shown and all counted in lines of s.
func (v *view) block(s string, most int, fold func(shown, all int) string) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	room := v.width - max(cells(gutter), cells(gutterMore))
	screen := 0
	for i, ln := range lines {
		// Of a long line no more is looked at than can be shown.
		ln = expandTabs(textcut.Prefix(ln, (most-screen)*room*utf8.UTFMax))
		for j, seg := range wrap(termtext.Line(ln), room) {
			if screen == most {
				fmt.Fprintf(&v.sb, "%s… %s\n", gutter[:4], fold(i, len(lines)))
				return
			}
			g := gutter
			if j > 0 {
				g = gutterMore
			}
			v.sb.WriteString(g + seg + "\n")
			screen++
		}
	}
}

// sizeOf is the size of a value: "3 lines, 40 B".
func sizeOf(s string) string {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	unit := "lines"
	if n == 1 {
		unit = "line"
	}
	return fmt.Sprintf("%d %s, %s", n, unit, bytesize.About(int64(len(s))))
}

// expandTabs replaces each tab with the spaces to the next multiple of 4.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += runeCells(r)
	}
	return b.String()
}

// wrap cuts s, an escaped line, into pieces of at most n cells; "" is one
// empty piece.
func wrap(s string, n int) []string {
	var out []string
	start, c := 0, 0
	for i, r := range s {
		w := runeCells(r)
		if c+w > n {
			out = append(out, s[start:i])
			start, c = i, 0
		}
		c += w
	}
	return append(out, s[start:])
}

// clipCells cuts s to at most n cells, "…" included when cut.
func clipCells(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	c := 1 // the "…"
	for i, r := range s {
		if c+runeCells(r) > n {
			return s[:i] + "…"
		}
		c += runeCells(r)
	}
	return s
}

// cells is the number of terminal cells s takes at most.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

// runeCells is the number of cells r takes at most: two for wide,
// fullwidth and ambiguous East Asian characters and for symbols (emoji),
// which terminals disagree on; else one. Counting too many only wraps a
// line early; too few would let the terminal wrap it to the key column.
func runeCells(r rune) int {
	if r < 0x80 {
		return 1
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth, width.EastAsianAmbiguous:
		return 2
	}
	if unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) {
		return 2
	}
	return 1
}
