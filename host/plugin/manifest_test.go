package plugin

import (
	"strings"
	"testing"
)

// TestManifestToolMeta: a manifest tool's annotations must be an object
// and its output_schema a valid schema of type object, each at most
// maxToolMeta bytes; null counts as absent.
func TestManifestToolMeta(t *testing.T) {
	big := `{"title": "` + strings.Repeat("x", maxToolMeta) + `"}`
	for _, c := range []struct {
		name, tool, err string
	}{
		{"both", `"annotations": {"title": "T", "readOnlyHint": true}, "output_schema": {"type": "object"}`, ""},
		{"nulls", `"annotations": null, "output_schema": null`, ""},
		{"annotations not an object", `"annotations": ["x"]`, `tool "t": annotations must be a JSON object`},
		{"annotations too big", `"annotations": ` + big, `tool "t": annotations are 65549 bytes of JSON; at most 65536`},
		{"output_schema not an object schema", `"output_schema": {"type": "string"}`, `tool "t": output_schema must be a JSON Schema with "type": "object"`},
		{"output_schema invalid", `"output_schema": {"type": "object", "properties": 5}`, `tool "t": output_schema: `},
	} {
		m, err := ParseManifest([]byte(`{"protocol": "agenthost/1", "tools": [{"name": "t", "description": "d", ` + c.tool + `}]}`))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.err == "" && c.name == "nulls" && (m.Tools[0].Annotations != nil || m.Tools[0].OutputSchema != nil):
			t.Errorf("%s: kept %s / %s", c.name, m.Tools[0].Annotations, m.Tools[0].OutputSchema)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestCompileSchemaOnce: a schema's text is compiled once (a manifest's
// schemas were compiled when it was parsed and again for its tools); a
// schema that does not compile is refused every time.
func TestCompileSchemaOnce(t *testing.T) {
	text := []byte(`{"type":"object","properties":{"once":{"type":"string"}}}`)
	a, err := compileSchema(text)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compileSchema(append([]byte(nil), text...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same schema text was compiled twice")
	}
	if err := a.Validate(map[string]any{"once": 1}); err == nil {
		t.Error("the shared schema accepted a number for a string")
	}
	other, err := compileSchema([]byte(`{"type":"object","properties":{"once":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if other == a {
		t.Error("two schema texts share one compiled schema")
	}
	bad := []byte(`{"type":"object","properties":{"once":{"type":7}}}`)
	for i := 0; i < 2; i++ {
		if _, err := compileSchema(bad); err == nil {
			t.Fatalf("call %d: a schema with type 7 compiled", i+1)
		}
	}
}
