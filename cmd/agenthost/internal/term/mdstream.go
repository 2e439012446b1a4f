package term

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/termtext"
)

// MarkdownStream draws an answer's Markdown on the console's terminal as
// it streams (the chat).
type MarkdownStream struct {
	con   *Console
	color bool
	lines MarkdownLines   // the response's Markdown state (a code block open)
	part  strings.Builder // the line being streamed, not yet whole
	seq   uint64          // the console's writes when part was last shown
	long  bool            // the line being streamed is too long to render
}

// NewMarkdownStream draws on con's stdout, in colour when color.
func NewMarkdownStream(con *Console, color bool) *MarkdownStream {
	return &MarkdownStream{con: con, color: color}
}

// Reset forgets the response drawn so far (it is retried).
func (m *MarkdownStream) Reset() {
	m.part.Reset()
	m.long, m.lines = false, MarkdownLines{}
}

// DropPart forgets the line being streamed, not yet whole, keeping the
// response's Markdown state: a retried stream shows that line again
// (Output's replay).
func (m *MarkdownStream) DropPart() {
	m.part.Reset()
	m.long = false
}

// Write renders streamed text a line at a time (MarkdownLines): each line is
// drawn rendered once it is whole. Until then its text is shown as it
// arrives, escaped, and replaced by its rendering when it ends, unless
// something else was written meanwhile (the line then stays as it came).
func (m *MarkdownStream) Write(s string) {
	for s != "" {
		line, rest, whole := strings.Cut(s, "\n")
		s = rest
		if m.long || m.part.Len()+len(line) > report.MarkdownMax {
			// A line this long is shown as it comes, not rendered.
			m.long = true
			m.part.Reset()
			m.con.WriteStyled(termtext.Escape(line))
			if whole {
				m.con.WriteStyled("\n")
				m.long = false
			}
			continue
		}
		if !whole {
			if line != "" {
				m.part.WriteString(line)
				m.seq = m.con.WriteStyled(termtext.Escape(line))
			}
			return
		}
		shown := m.part.Len() > 0
		if shown {
			m.part.WriteString(line)
			line = m.part.String()
			m.part.Reset()
		}
		r := m.lines.Line(line, m.color)
		if !shown {
			m.con.WriteStyled(r + "\n")
			continue
		}
		if m.con.SeqNow() == m.seq && !strings.Contains(line, "\t") {
			// Replace the raw line: up over the rows it wrapped to, then
			// clear from there down.
			rows := (TextWidth(termtext.Escape(line)) - 1) / m.con.Columns()
			up := "\r"
			if rows > 0 {
				up = fmt.Sprintf("\x1b[%dA\r", rows)
			}
			m.con.WriteStyled(up + "\x1b[J" + r + "\n")
			continue
		}
		m.con.WriteStyled("\n")
	}
}

// Flush ends the response's text: a line left open is drawn rendered.
func (m *MarkdownStream) Flush() {
	if m.part.Len() > 0 || m.long {
		m.Write("\n")
	}
	m.lines = MarkdownLines{}
}
