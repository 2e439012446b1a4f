package component

import "encoding/json"

// packageDocs is the documentation wit-component stores in the
// package-docs custom section: a version byte, then JSON.
type packageDocs struct {
	Worlds     map[string]docsWorld `json:"worlds"`
	Interfaces map[string]docsIface `json:"interfaces"`
}

type docsWorld struct {
	FuncExports map[string]json.RawMessage `json:"func_exports"`
}

type docsIface struct {
	Funcs map[string]json.RawMessage `json:"funcs"`
}

func parseDocs(b []byte) packageDocs {
	var d packageDocs
	if len(b) > 1 {
		_ = json.Unmarshal(b[1:], &d) // documentation is optional: a bad section is ignored
	}
	return d
}

// funcDoc reads a function's entry: its docs as a string, or an object
// with "docs".
func funcDoc(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Docs string `json:"docs"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.Docs
}

// lookup finds the docs of a function exported at the top level (iface
// "") or in an exported interface of the component's own package.
func (d packageDocs) lookup(iface, name string) string {
	if iface == "" {
		for _, w := range d.Worlds {
			if raw, ok := w.FuncExports[name]; ok {
				return funcDoc(raw)
			}
		}
		return ""
	}
	base, _ := splitVersion(iface)
	if i := lastSlash(base); i >= 0 {
		base = base[i+1:]
	}
	if it, ok := d.Interfaces[base]; ok {
		if raw, ok := it.Funcs[name]; ok {
			return funcDoc(raw)
		}
	}
	return ""
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
