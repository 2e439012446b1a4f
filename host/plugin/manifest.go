package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthost/agenthost/internal/toolname"
)

// Protocol is the protocol version this host speaks.
const Protocol = "agenthost/1"

// Manifest describes an agenthost plugin: its tools and the capabilities it
// asks for. It is read from the agenthost.manifest custom section, or from
// the stdout of a run with AGENTHOST_MODE=describe.
type Manifest struct {
	Protocol    string         `json:"protocol"`
	Name        string         `json:"name,omitempty"`
	Version     string         `json:"version,omitempty"`
	Description string         `json:"description,omitempty"`
	Tools       []ManifestTool `json:"tools"`
	Requests    Requests       `json:"requests"`
	// Reuse says the guest can serve many calls from one instance: when
	// the host sets AGENTHOST_REUSE=1 it reads one request per line of
	// stdin and answers each with one line on stdout (see
	// docs/plugin-protocol.md, "Serving many calls").
	Reuse bool `json:"reuse,omitempty"`
}

// ManifestTool is one tool of a manifest.
type ManifestTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments; {"type":"object"}
	// when the manifest leaves it out.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Annotations are MCP ToolAnnotations (title and hints), offered on by
	// mcp serve; an object of at most maxToolMeta bytes.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// OutputSchema is the JSON Schema (of type object) of the result's
	// structured_content, offered on by mcp serve; at most maxToolMeta
	// bytes.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// maxToolMeta bounds the JSON of a tool's annotations and of its output
// schema.
const maxToolMeta = 64 << 10

// Requests are the capabilities a plugin asks for. Each is granted only if
// the plugin block in agents.hcl grants it too.
type Requests struct {
	FS     []FSRequest  `json:"fs,omitempty"`
	Env    []EnvRequest `json:"env,omitempty"`
	Clock  bool         `json:"clock,omitempty"`
	Random bool         `json:"random,omitempty"`
}

// FSRequest asks for a directory at a guest path, or with Guest AnyMount for
// every mount the plugin block declares, wherever it is.
type FSRequest struct {
	Guest string `json:"guest"`
	// Access is "ro" (default) or "rw".
	Access string `json:"access,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AnyMount as an fs request's guest path asks for every mount the plugin
// block declares, at the guest paths it gives: for plugins, like core, that
// work on whatever directories the user mounts and find them as preopens.
const AnyMount = "*"

// EnvRequest asks for one environment variable.
type EnvRequest struct {
	Key    string `json:"key"`
	Reason string `json:"reason,omitempty"`
}

// defaultSchema is the input schema of a tool that declares none.
var defaultSchema = json.RawMessage(`{"type":"object"}`)

// ParseManifest decodes and validates a manifest. It checks the protocol,
// tool names (unique, matching toolname.Pattern), that every input schema
// compiles, and the shape of the requests.
func ParseManifest(data []byte) (*Manifest, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("manifest is empty")
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON: %w", err)
	}
	if m.Protocol != Protocol {
		return nil, fmt.Errorf("manifest protocol is %q; this host speaks %q", m.Protocol, Protocol)
	}
	if len(m.Tools) == 0 {
		return nil, errors.New("manifest declares no tools")
	}
	var errs []error
	seen := map[string]bool{}
	for i := range m.Tools {
		t := &m.Tools[i]
		if !toolname.Valid(t.Name) {
			errs = append(errs, fmt.Errorf("tool name %q must match %s", t.Name, toolname.Pattern))
			continue
		}
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("tool %q is declared twice", t.Name))
		}
		seen[t.Name] = true
		if len(bytes.TrimSpace(t.InputSchema)) == 0 || string(bytes.TrimSpace(t.InputSchema)) == "null" {
			t.InputSchema = defaultSchema
		}
		if _, err := compileSchema(t.InputSchema); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", t.Name, err))
		}
		errs = append(errs, checkToolMeta(t))
	}
	for _, r := range m.Requests.FS {
		if r.Guest != AnyMount && !path.IsAbs(r.Guest) {
			errs = append(errs, fmt.Errorf("fs request for %q: guest path must be absolute (or %q for every mount the configuration grants)", r.Guest, AnyMount))
		}
		if r.Access != "" && r.Access != "ro" && r.Access != "rw" {
			errs = append(errs, fmt.Errorf("fs request for %q: access is %q, want \"ro\" or \"rw\"", r.Guest, r.Access))
		}
	}
	for _, r := range m.Requests.Env {
		if r.Key == "" || strings.ContainsAny(r.Key, "=\x00") {
			errs = append(errs, fmt.Errorf("env request for %q: not a valid variable name", r.Key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid manifest: %w", err)
	}
	return &m, nil
}

// denyLoader refuses every $ref that is not inside the schema itself, so a
// plugin's schema can never make the host read a file or the network.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q; only references within the schema are allowed", url)
}

// compileSchema compiles one tool input schema. It is called at load time
// only; validation on the call path reuses the compiled schema. A schema
// compiled before (the same text) is not compiled again: a manifest's
// schemas are compiled when it is parsed, to check them, and again for its
// tools, each compilation checking the schema against the draft's
// meta-schema (a tenth of a millisecond or more a schema, in every
// start-up). A compiled schema is read-only and is shared by every tool
// with that text (the same location, so the same error messages).
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	schemas.Lock()
	s, ok := schemas.m[string(raw)]
	schemas.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileSchemaNow(raw)
	if err != nil {
		return nil, err
	}
	schemas.Lock()
	if schemas.m == nil {
		schemas.m = map[string]*jsonschema.Schema{}
	}
	if len(schemas.m) < maxSchemas {
		schemas.m[string(raw)] = s
	}
	schemas.Unlock()
	return s, nil
}

// schemas are the schemas compileSchema compiled, by their text: at most
// maxSchemas, so that a long-lived process that reloads plugins with ever
// new schemas keeps a bounded number (the rest are compiled each time).
var schemas struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}

const maxSchemas = 512

// compileSchemaNow is compileSchema without the memo.
func compileSchemaNow(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("input_schema is not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, fmt.Errorf("input_schema must be a JSON object, got %s", shorten(string(raw), 40))
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(denyLoader{})
	const url = "mem://tool/input_schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("input_schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("input_schema does not compile: %w", err)
	}
	return s, nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkToolMeta checks a tool's optional annotations (a JSON object) and
// output schema (a valid JSON Schema of type object), each at most
// maxToolMeta bytes; "null" counts as absent.
func checkToolMeta(t *ManifestTool) error {
	var errs []error
	if a := bytes.TrimSpace(t.Annotations); len(a) == 0 || string(a) == "null" {
		t.Annotations = nil
	} else if len(a) > maxToolMeta {
		errs = append(errs, fmt.Errorf("tool %q: annotations are %d bytes of JSON; at most %d", t.Name, len(a), maxToolMeta))
	} else if a[0] != '{' {
		errs = append(errs, fmt.Errorf("tool %q: annotations must be a JSON object (MCP ToolAnnotations: title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint)", t.Name))
	}
	if o := bytes.TrimSpace(t.OutputSchema); len(o) == 0 || string(o) == "null" {
		t.OutputSchema = nil
	} else if len(o) > maxToolMeta {
		errs = append(errs, fmt.Errorf("tool %q: output_schema is %d bytes of JSON; at most %d", t.Name, len(o), maxToolMeta))
	} else {
		var s struct {
			Type any `json:"type"`
		}
		if json.Unmarshal(o, &s) != nil || s.Type != "object" {
			errs = append(errs, fmt.Errorf("tool %q: output_schema must be a JSON Schema with \"type\": \"object\" (MCP requires one)", t.Name))
		} else if _, err := compileSchema(o); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: output_schema: %w", t.Name, err))
		}
	}
	return errors.Join(errs...)
}
