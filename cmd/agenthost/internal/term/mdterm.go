package term

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/text/width"

	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/termtext"
)

// The chat renders the answer's Markdown on a terminal: headings, lists,
// code, emphasis, quotes, links and tables, parsed by goldmark and drawn
// here with a few SGR attributes. Every piece of the model's text is
// escaped (termtext) before it is placed, so the only control sequences
// that reach the terminal are the ones added here. Without colour
// (NO_COLOR) the layout stays (bullets, indented code, quote bars) and the
// emphasis keeps its Markdown marks.

var mdTermParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// SGR attributes, each with the code that ends only it.
const (
	sgrBold      = "\x1b[1m"
	sgrBoldOff   = "\x1b[22m"
	sgrItalic    = "\x1b[3m"
	sgrItalicOff = "\x1b[23m"
	sgrUnder     = "\x1b[4m"
	sgrUnderOff  = "\x1b[24m"
	sgrStrike    = "\x1b[9m"
	sgrStrikeOff = "\x1b[29m"
	sgrCode      = "\x1b[36m" // cyan
	sgrDim       = "\x1b[2m"
	sgrFgOff     = "\x1b[39m"
)

// Markdown renders src for a terminal; the result ends with a
// newline unless it is empty.
func Markdown(src string, color bool) string {
	b := []byte(src)
	doc := mdTermParser.Parse(text.NewReader(b))
	m := &mdTerm{src: b, color: color}
	lines := m.children(doc, false)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

type mdTerm struct {
	src   []byte
	color bool
}

// style wraps s in an attribute when colour is on, else in the marks.
func (m *mdTerm) style(s, on, off, mark string) string {
	if m.color {
		return on + s + off
	}
	return mark + s + mark
}

// children renders the blocks under n, a blank line between them unless
// tight (the items of a tight list).
func (m *mdTerm) children(n ast.Node, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := m.block(c)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block renders one block as lines.
func (m *mdTerm) block(n ast.Node) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return strings.Split(m.inline(n), "\n")
	case *ast.Heading:
		t := m.inline(n)
		if !m.color {
			return []string{strings.Repeat("#", n.Level) + " " + t}
		}
		if n.Level == 1 {
			return []string{sgrBold + sgrUnder + t + sgrUnderOff + sgrBoldOff}
		}
		return []string{sgrBold + t + sgrBoldOff}
	case *ast.ThematicBreak:
		return []string{m.dim(strings.Repeat("─", 20))}
	case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
		var out []string
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			l := strings.TrimRight(termtext.Escape(string(seg.Value(m.src))), "\n")
			if _, html := n.(*ast.HTMLBlock); html {
				out = append(out, l)
				continue
			}
			if m.color {
				l = sgrCode + l + sgrFgOff
			}
			out = append(out, "    "+l)
		}
		if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
			out = append(out, strings.TrimRight(termtext.Escape(string(h.ClosureLine.Value(m.src))), "\n"))
		}
		return out
	case *ast.Blockquote:
		lines := m.children(n, false)
		for i, l := range lines {
			lines[i] = m.dim("│") + " " + l
		}
		return lines
	case *ast.List:
		var out []string
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			marker := "• "
			if n.IsOrdered() {
				marker = fmt.Sprintf("%d. ", num)
				num++
			}
			lines := m.children(item, true)
			if len(lines) == 0 {
				lines = []string{""}
			}
			if len(out) > 0 && !n.IsTight {
				out = append(out, "")
			}
			pad := strings.Repeat(" ", utf8.RuneCountInString(marker))
			for i, l := range lines {
				if i == 0 {
					out = append(out, marker+l)
				} else if l == "" {
					out = append(out, "")
				} else {
					out = append(out, pad+l)
				}
			}
		}
		return out
	case *east.Table:
		return m.table(n)
	}
	return m.children(n, false)
}

func (m *mdTerm) dim(s string) string {
	if m.color {
		return sgrDim + s + sgrBoldOff
	}
	return s
}

// table renders a table with its columns aligned; cells are plain text.
func (m *mdTerm) table(t *east.Table) []string {
	var rows [][]string
	plain := &mdTerm{src: m.src}
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			row = append(row, strings.ReplaceAll(plain.inline(c), "\n", " "))
		}
		rows = append(rows, row)
	}
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var out []string
	for ri, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
		}
		line := strings.TrimRight(strings.Join(cells, " │ "), " ")
		if ri == 0 && m.color {
			line = sgrBold + line + sgrBoldOff
		}
		out = append(out, line)
		if ri == 0 {
			seps := make([]string, len(width))
			for i, w := range width {
				seps[i] = strings.Repeat("─", w)
			}
			out = append(out, strings.Join(seps, "─┼─"))
		}
	}
	return out
}

// inline renders the inline content under n; line breaks stay "\n".
func (m *mdTerm) inline(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.WriteString(termtext.Escape(string(c.Segment.Value(m.src))))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte('\n')
			}
		case *ast.String:
			b.WriteString(termtext.Escape(string(c.Value)))
		case *ast.CodeSpan:
			t := termtext.Escape(string(report.NodeText(c, m.src)))
			if m.color {
				b.WriteString(sgrCode + t + sgrFgOff)
			} else {
				b.WriteString("`" + t + "`")
			}
		case *ast.Emphasis:
			if c.Level >= 2 {
				b.WriteString(m.style(m.inline(c), sgrBold, sgrBoldOff, "**"))
			} else {
				b.WriteString(m.style(m.inline(c), sgrItalic, sgrItalicOff, "*"))
			}
		case *east.Strikethrough:
			b.WriteString(m.style(m.inline(c), sgrStrike, sgrStrikeOff, "~~"))
		case *ast.Link:
			t := m.inline(c)
			dest := termtext.Escape(string(c.Destination))
			if m.color {
				t = sgrUnder + t + sgrUnderOff
			}
			b.WriteString(t)
			if string(report.NodeText(c, m.src)) != string(c.Destination) {
				b.WriteString(" <" + dest + ">")
			}
		case *ast.AutoLink:
			t := termtext.Escape(string(c.Label(m.src)))
			if m.color {
				t = sgrUnder + t + sgrUnderOff
			}
			b.WriteString(t)
		case *ast.Image:
			b.WriteString("[image: " + termtext.Escape(string(report.NodeText(c, m.src))) + "] <" + termtext.Escape(string(c.Destination)) + ">")
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				b.WriteString(termtext.Escape(string(seg.Value(m.src))))
			}
		default:
			b.WriteString(m.inline(c))
		}
	}
	return b.String()
}

// MarkdownLines renders a streamed answer a line at a time: each line as
// Markdown on its own (a heading, a list item, a quote, a paragraph's
// line with its emphasis and code), the lines of a fenced code block as
// code. Its leading spaces are kept, so nested lists stay nested.
type MarkdownLines struct {
	fence string // the open code fence's mark, "" outside one
}

// Line renders one whole line (without its newline).
func (m *MarkdownLines) Line(l string, color bool) string {
	t := strings.TrimLeft(l, " \t")
	indent := termtext.Escape(l[:len(l)-len(t)])
	if f := fenceMark(l); f != "" && (m.fence == "" || f == m.fence && strings.Trim(t, f[:1]+" ") == "") {
		if m.fence == "" {
			m.fence = f
		} else {
			m.fence = ""
		}
		if color {
			return indent + sgrDim + termtext.Escape(t) + sgrBoldOff
		}
		return indent + termtext.Escape(t)
	}
	if m.fence != "" {
		if color {
			return "    " + sgrCode + termtext.Escape(l) + sgrFgOff
		}
		return "    " + termtext.Escape(l)
	}
	if t == "" {
		return ""
	}
	r := strings.TrimSuffix(Markdown(t, color), "\n")
	return indent + strings.ReplaceAll(r, "\n", "\n"+indent)
}

// fenceMark is the mark of a code fence that l opens or closes ("```" or
// "~~~"), or "".
func fenceMark(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return f
		}
	}
	return ""
}

// TextWidth is the columns escaped text takes on a terminal: two for a
// wide East Asian character, one for any other.
func TextWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return max(n, 1)
}
