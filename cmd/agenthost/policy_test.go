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
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSourcePolicy enforces two rules of docs/architecture.md on every
// non-test Go file of the module (build tags ignored, so files for other
// systems are checked too):
//
//   - wazero is used through its public API only: no file imports one of
//     its internal packages or names one of its unexported or internal
//     types in a string (what reflection would need), and a file that
//     imports wazero imports no unsafe and uses reflect only to select on
//     channels (reflect.Select, SelectCase and ValueOf; no field access,
//     no NewAt, no unsafe pointers): nothing that reaches another
//     package's unexported state.
//   - process-wide policy is the command's: only cmd/agenthost calls
//     runtime.GOMAXPROCS, runtime.GC, debug.FreeOSMemory,
//     debug.SetGCPercent or debug.SetMemoryLimit, or reads the process's
//     own mappings (/proc/self/smaps or maps, what finding the
//     executable's pages takes); elsewhere only a package that maps
//     memory itself (host/plugin's guest memories) madvises, and then the
//     memory it mapped.
func TestSourcePolicy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := moduleFiles(t, root)
	if len(files) < 50 {
		t.Fatalf("found %d Go files under %s; expected the whole module", len(files), root)
	}
	madvise := map[string][]string{} // directory → its madvise findings
	maps := map[string]bool{}        // directory → it maps memory itself
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		dir := filepath.ToSlash(filepath.Dir(rel))
		c := checkSource(t, f, dir)
		for _, v := range c.violations {
			t.Errorf("%s: %s", rel, v)
		}
		for _, v := range c.madvise {
			madvise[dir] = append(madvise[dir], rel+": "+v)
		}
		maps[dir] = maps[dir] || c.mmap
	}
	for dir, vs := range madvise {
		if !maps[dir] {
			for _, v := range vs {
				t.Errorf("%s: madvise of memory the package did not map: process-wide policy is cmd/agenthost's", v)
			}
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
		"field access":    {"host/plugin", `package p; import ("reflect"; "github.com/tetratelabs/wazero"); var _ = reflect.ValueOf(wazero.NewRuntimeConfig()).Elem().FieldByName("x")`},
		"new at":          {"host/component", `package p; import ("reflect"; _ "github.com/tetratelabs/wazero"); var _ = reflect.NewAt`},
		"gomaxprocs":      {"host", `package p; import "runtime"; func f() { runtime.GOMAXPROCS(1) }`},
		"renamed import":  {"internal/x", `package p; import rt "runtime"; func f() { rt.GC() }`},
		"free os memory":  {"host/plugin", `package p; import "runtime/debug"; func f() { debug.FreeOSMemory() }`},
		"gc percent":      {"loop", `package p; import "runtime/debug"; func f() { debug.SetGCPercent(50) }`},
		"madvise":         {"internal/x", `package p; import "golang.org/x/sys/unix"; func f(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }`},
		"syscall madvise": {"internal/x", `package p; import "syscall"; func f() { syscall.Syscall(syscall.SYS_MADVISE, 0, 0, 0) }`},
		"own mappings":    {"host/plugin", `package p; import "os"; func f() { os.ReadFile("/proc/self/smaps") }`},
	}
	dir := t.TempDir()
	for name, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".go")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := checkSource(t, path, c.dir); len(got.violations)+len(got.madvise) == 0 || got.mmap {
			t.Errorf("%s: no violation found in %s", name, c.src)
		}
	}
	// A select over channels, beside wazero.
	path0 := filepath.Join(dir, "select.go")
	src0 := `package p; import ("reflect"; _ "github.com/tetratelabs/wazero"); func f(ch chan int) { reflect.Select([]reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}}) }`
	if err := os.WriteFile(path0, []byte(src0), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSource(t, path0, "host/component"); len(c.violations) != 0 {
		t.Errorf("a select over channels: %q", c.violations)
	}
	// What the command may do.
	path := filepath.Join(dir, "cmd.go")
	src := `package main; import ("runtime"; "runtime/debug"); func f() { runtime.GOMAXPROCS(1); debug.FreeOSMemory() }`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSource(t, path, "cmd/agenthost"); len(c.violations)+len(c.madvise) != 0 {
		t.Errorf("cmd/agenthost: %q %q", c.violations, c.madvise)
	}
	// A package that maps memory may advise it.
	path = filepath.Join(dir, "mem.go")
	src = `package p; import "golang.org/x/sys/unix"; func f() { b, _ := unix.Mmap(-1, 0, 4096, 0, 0); unix.Madvise(b, unix.MADV_DONTNEED) }`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSource(t, path, "host/plugin"); len(c.violations) != 0 || len(c.madvise) == 0 || !c.mmap {
		t.Errorf("mapped memory: %+v", c)
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

// reflectSelect is what a file that imports wazero may use of reflect:
// selecting on channels.
var reflectSelect = []string{"Select", "SelectCase", "SelectRecv", "SelectSend", "SelectDefault", "SelectDir", "ValueOf"}

// reflectReach are the reflect methods that reach into a value's fields or
// memory, forbidden in a file that imports wazero whatever they are called
// on.
var reflectReach = []string{"Field", "FieldByName", "FieldByIndex", "FieldByIndexErr", "FieldByNameFunc", "NumField", "UnsafeAddr", "UnsafePointer", "NewAt", "SetPointer"}

// processCalls are the functions that set process-wide state, by import
// path; madvise is matched by name in any package.
var processCalls = map[string][]string{
	"runtime":       {"GOMAXPROCS", "GC"},
	"runtime/debug": {"FreeOSMemory", "SetGCPercent", "SetMemoryLimit"},
}

// sourceCheck is what checkSource finds in a file.
type sourceCheck struct {
	violations []string
	madvise    []string // madvise calls, allowed in a package that maps memory
	mmap       bool     // the file maps memory itself
}

// checkSource checks the file at path; dir is its directory relative to
// the module root.
func checkSource(t *testing.T, path, dir string) sourceCheck {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []string
	var c sourceCheck
	names := map[string]string{} // local name → import path
	wazero, unsafeImported := false, false
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
		case p == "unsafe":
			unsafeImported = true
		}
	}
	if wazero && unsafeImported {
		out = append(out, "imports wazero and unsafe: wazero is used through its public API only")
	}
	command := dir == "cmd/agenthost"
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				s, err := strconv.Unquote(n.Value)
				if err == nil && wazeroTypeName.MatchString(s) {
					out = append(out, fmt.Sprintf("line %d names a type wazero does not export: %q", fset.Position(n.Pos()).Line, s))
				}
				if err == nil && !command && (strings.Contains(s, "/proc/self/smaps") || strings.Contains(s, "/proc/self/maps")) {
					out = append(out, fmt.Sprintf("line %d reads the process's own mappings: process-wide policy is cmd/agenthost's", fset.Position(n.Pos()).Line))
				}
			}
		case *ast.SelectorExpr:
			sel := n.Sel.Name
			x, ok := n.X.(*ast.Ident)
			if wazero && (slices.Contains(reflectReach, sel) || ok && names[x.Name] == "reflect" && !slices.Contains(reflectSelect, sel)) {
				out = append(out, fmt.Sprintf("line %d uses reflect's %s beside wazero: wazero is used through its public API only", fset.Position(n.Pos()).Line, sel))
			}
			if !ok || command {
				return true
			}
			at := fmt.Sprintf("line %d uses %s.%s", fset.Position(n.Pos()).Line, x.Name, sel)
			switch {
			case slices.Contains(processCalls[names[x.Name]], sel):
				out = append(out, at+": process-wide policy is cmd/agenthost's")
			case strings.Contains(strings.ToUpper(sel), "MADVISE"):
				c.madvise = append(c.madvise, at)
			case sel == "Mmap" || sel == "SYS_MMAP":
				c.mmap = true
			}
		}
		return true
	})
	c.violations = out
	return c
}
