package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSourcePolicy enforces a rule of docs/architecture.md on every
// non-test Go file of the module (build tags ignored, so files for other
// systems are checked too): wazero is used through its public API only.
// No file imports one of its internal packages or names one of its
// unexported or internal types in a string (what reflection would need),
// and no file that imports wazero imports reflect or unsafe.
func TestSourcePolicy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := moduleFiles(t, root)
	if len(files) < 50 {
		t.Fatalf("found %d Go files under %s; expected the whole module", len(files), root)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for _, v := range checkSource(t, f, filepath.ToSlash(filepath.Dir(rel))) {
			t.Errorf("%s: %s", rel, v)
		}
	}
}

// TestSourcePolicyCatches feeds the checker sources that break each rule.
func TestSourcePolicyCatches(t *testing.T) {
	cases := map[string]struct {
		dir, src string
	}{
		"internal import": {"host/plugin", `package p; import _ "github.com/tetratelabs/wazero/internal/wasm"`},
		"type name":       {"host/plugin", `package p; const s = "*wazero.compiledModule"`},
		"internal type":   {"host/plugin", "package p; const s = `*wasm.Module`"},
		"reflect":         {"host/plugin", `package p; import ("reflect"; "github.com/tetratelabs/wazero"); var _ = reflect.TypeOf(wazero.NewRuntimeConfig())`},
		"unsafe":          {"host/plugin", `package p; import (_ "unsafe"; _ "github.com/tetratelabs/wazero/api")`},
	}
	dir := t.TempDir()
	for name, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".go")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if v := checkSource(t, path, c.dir); len(v) == 0 {
			t.Errorf("%s: no violation found in %s", name, c.src)
		}
	}
}

// moduleFiles lists the non-test Go files of the module at root, leaving
// out nested modules (plugin sources, examples), testdata and hidden or
// node_modules directories.
func moduleFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root {
				if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// wazeroTypeName matches a string naming a type wazero does not export:
// an unexported one of its public packages or any of an internal one.
var wazeroTypeName = regexp.MustCompile(`(^|[^\w.])\*?(wazero\.[a-z_]|(wasm|wazevo|filecache|interpreter|wazevoapi|sysfs|platform)\.[A-Za-z_])`)

// checkSource returns the rules the file at path breaks; dir is its
// directory relative to the module root.
func checkSource(t *testing.T, path, dir string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []string
	names := map[string]string{} // local name → import path
	wazero, reflectOrUnsafe := false, ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
		switch {
		case p == "github.com/tetratelabs/wazero/internal" || strings.HasPrefix(p, "github.com/tetratelabs/wazero/internal/"):
			out = append(out, "imports wazero's internal package "+p)
		case p == "github.com/tetratelabs/wazero" || strings.HasPrefix(p, "github.com/tetratelabs/wazero/"):
			wazero = true
		case p == "reflect" || p == "unsafe":
			reflectOrUnsafe = p
		}
	}
	if wazero && reflectOrUnsafe != "" {
		out = append(out, "imports wazero and "+reflectOrUnsafe+": wazero is used through its public API only")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil && wazeroTypeName.MatchString(s) {
					out = append(out, fmt.Sprintf("line %d names a type wazero does not export: %q", fset.Position(n.Pos()).Line, s))
				}
			}
		}
		return true
	})
	return out
}
