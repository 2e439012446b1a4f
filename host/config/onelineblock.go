package config

import (
	"bytes"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// oneLineBlock rewrites the one-line block on line (1-based) of src with
// each attribute on its own line, for the hint of HCL's "Invalid
// single-argument block definition": the user's own block, ready to
// paste. A line it cannot take apart gives a generic example instead.
func oneLineBlock(src []byte, line int) string {
	const example = "  retry {\n    attempts = 5\n    initial  = \"1s\"\n  }"
	lines := bytes.Split(src, []byte("\n"))
	if line < 1 || line > len(lines) {
		return example
	}
	text := strings.TrimRight(string(lines[line-1]), "\r")
	open := strings.IndexByte(text, '{')
	if open < 0 {
		return example
	}
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	header := strings.TrimSpace(text[:open])
	body := text[open+1:]
	if i := strings.LastIndexByte(body, '}'); i >= 0 && strings.TrimSpace(body[i+1:]) == "" {
		body = body[:i]
	}
	// Split the body where an attribute starts: a name followed by =, at
	// the top level (not inside brackets, braces or a string).
	toks, diags := hclsyntax.LexConfig([]byte(body), "", hcl.InitialPos)
	if diags.HasErrors() {
		return example
	}
	var attrs []string
	start, depth := -1, 0
	flush := func(end int) {
		if start >= 0 {
			a := strings.TrimSpace(body[start:end])
			a = strings.TrimSpace(strings.TrimSuffix(a, ","))
			if a != "" {
				attrs = append(attrs, a)
			}
		}
	}
	for i, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOQuote, hclsyntax.TokenTemplateInterp:
			depth++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote, hclsyntax.TokenTemplateSeqEnd:
			depth--
		case hclsyntax.TokenIdent:
			if depth == 0 && i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenEqual {
				flush(t.Range.Start.Byte)
				start = t.Range.Start.Byte
			}
		}
	}
	flush(len(body))
	if header == "" || len(attrs) < 2 {
		return example
	}
	// Align the = signs, as hclwrite does.
	width := 0
	for _, a := range attrs {
		name, _, _ := strings.Cut(a, "=")
		width = max(width, len(strings.TrimSpace(name)))
	}
	var b strings.Builder
	b.WriteString(indent + header + " {\n")
	for _, a := range attrs {
		name, value, _ := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		b.WriteString(indent + "  " + name + strings.Repeat(" ", width-len(name)) + " = " + strings.TrimSpace(value) + "\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}
