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
