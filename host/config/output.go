package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// approve decodes an agent's approve list: tool names and path.Match
// patterns. A malformed pattern is an error; one that matches none of the
// agent's tools and subagents is a warning (likely a typo: it would never
// ask).
func (b *builder) approve(a *Agent, ra *rawAgent) {
	names, ranges := b.nameList(ra.Approve, ra.ApproveRange, "approve", "approve pattern")
	for i, p := range names {
		if _, err := path.Match(p, ""); err != nil || strings.TrimSpace(p) == "" {
			b.errorf(ranges[i], "Invalid approve pattern",
				"%q is not a tool name or pattern: patterns match whole tool names with * (any characters), ? (one) and [...] (a class), like \"write_file\" or \"gh__*\".", p)
			continue
		}
		matched := false
		for _, t := range append(append([]string(nil), a.Tools...), a.Subagents...) {
			if ok, _ := path.Match(p, t); ok {
				matched = true
				break
			}
		}
		if !matched {
			b.warnf(ranges[i], "approve pattern matches no tool",
				"%q matches none of agent %q's tools and subagents, so it never asks; check the name against tools and subagents.", p, a.Name)
		}
		a.Approve = append(a.Approve, p)
	}
}

// outputSchema decodes an agent's output_schema: JSON Schema text (usually
// file("schemas/x.json")) or an HCL object. It must compile as a JSON
// Schema (draft 2020-12 unless $schema says otherwise), with no reference
// to load from files or the network. It returns the schema as compact
// JSON, or nil after an error.
func (b *builder) outputSchema(v cty.Value, r hcl.Range) []byte {
	const hint = "output_schema is the JSON Schema of the agent's final answer: JSON text, usually file(\"schemas/answer.json\"), or an object like { type = \"object\", required = [\"answer\"] }."
	if v.IsNull() || !v.IsWhollyKnown() {
		b.errorf(r, "Invalid output_schema", "%s", hint)
		return nil
	}
	var raw []byte
	switch t := v.Type(); {
	case t == cty.String:
		raw = []byte(v.AsString())
	case t.IsObjectType() || t.IsMapType():
		var err error
		if raw, err = ctyjson.Marshal(v, t); err != nil {
			b.errorf(r, "Invalid output_schema", "output_schema cannot be written as JSON: %v.", err)
			return nil
		}
	default:
		b.errorf(r, "Invalid output_schema", "%s", hint)
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		b.errorf(r, "Invalid output_schema", "output_schema is not valid JSON: %v. %s", err, hint)
		return nil
	}
	if _, err := CompileOutputSchema(compact.Bytes()); err != nil {
		b.errorf(r, "Invalid output_schema", "output_schema is not a valid JSON Schema: %v.", oneLine(err.Error()))
		return nil
	}
	return compact.Bytes()
}

// CompileOutputSchema compiles an output schema for validation. It loads
// nothing: a $ref to a file or URL fails.
func CompileOutputSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return nil, errSchemaShape
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network access
	if err := c.AddResource(outputSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(outputSchemaURL)
}

var errSchemaShape = errors.New("a JSON Schema is an object (or true or false)")

// outputSchemaURL names an output schema while it compiles: a relative
// $ref resolves against it to a URL nothing loads, so it fails.
const outputSchemaURL = "https://agenthost.invalid/output_schema.json"
