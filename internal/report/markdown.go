package report

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// MarkdownMax is the largest answer rendered as Markdown (the HTML report,
// the chat); a longer one is shown as plain text. Model output is
// untrusted, and the parser's time grows with odd input.
const MarkdownMax = 256 << 10

// mdHTML renders an answer's Markdown for the HTML report. The model's
// text is untrusted, so the page gains no markup of its choosing: goldmark
// escapes text and drops raw HTML unless told otherwise, and safeHTMLNodes
// goes further, so that nothing in the answer fetches or navigates:
// raw HTML is shown as text, a link as its text and its address, an image
// as its description and its address. It is built at its first use, not
// at package init, which every command's start-up pays.
var mdHTML = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeHTMLNodes{}, 100))),
	)
})

// markdownHTML is s rendered as HTML, or ok false when it is too long or
// does not render.
func markdownHTML(s string) (template.HTML, bool) {
	if len(s) > MarkdownMax {
		return "", false
	}
	var b bytes.Buffer
	if err := mdHTML().Convert([]byte(s), &b); err != nil {
		return "", false
	}
	return template.HTML(b.String()), true
}

// safeHTMLNodes renders the nodes that would otherwise become markup the
// answer chose (goldmark's html renderer registers at priority 1000; a
// lower number wins).
type safeHTMLNodes struct{}

func (safeHTMLNodes) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindLink, renderSafeLink)
	r.Register(ast.KindAutoLink, renderSafeAutoLink)
	r.Register(ast.KindImage, renderSafeImage)
	r.Register(ast.KindRawHTML, renderSafeRawHTML)
	r.Register(ast.KindHTMLBlock, renderSafeHTMLBlock)
}

func renderSafeLink(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		w.WriteString(`<span class="link">`)
		return ast.WalkContinue, nil
	}
	w.WriteString(`</span> <span class="url">`)
	w.Write(util.EscapeHTML(n.(*ast.Link).Destination))
	w.WriteString(`</span>`)
	return ast.WalkContinue, nil
}

func renderSafeAutoLink(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		w.WriteString(`<span class="url">`)
		w.Write(util.EscapeHTML(n.(*ast.AutoLink).Label(src)))
		w.WriteString(`</span>`)
	}
	return ast.WalkContinue, nil
}

func renderSafeImage(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	w.WriteString(`<span class="image">[image: `)
	w.Write(util.EscapeHTML(NodeText(img, src)))
	w.WriteString(`]</span> <span class="url">`)
	w.Write(util.EscapeHTML(img.Destination))
	w.WriteString(`</span>`)
	return ast.WalkSkipChildren, nil
}

func renderSafeRawHTML(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			w.Write(util.EscapeHTML(seg.Value(src)))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderSafeHTMLBlock(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	b := n.(*ast.HTMLBlock)
	w.WriteString(`<pre class="html">`)
	for i := range b.Lines().Len() {
		seg := b.Lines().At(i)
		w.Write(util.EscapeHTML(seg.Value(src)))
	}
	if b.HasClosure() {
		w.Write(util.EscapeHTML(b.ClosureLine.Value(src)))
	}
	w.WriteString("</pre>\n")
	return ast.WalkSkipChildren, nil
}

// nodeText is the plain text under n (an image's description, a heading).
func NodeText(n ast.Node, src []byte) []byte {
	var b []byte
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b = append(b, c.Segment.Value(src)...)
			if c.SoftLineBreak() || c.HardLineBreak() {
				b = append(b, ' ')
			}
		case *ast.String:
			b = append(b, c.Value...)
		case *ast.CodeSpan:
			for k := c.FirstChild(); k != nil; k = k.NextSibling() {
				if t, ok := k.(*ast.Text); ok {
					b = append(b, t.Segment.Value(src)...)
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b
}
