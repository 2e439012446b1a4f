package main

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureMap keeps docs/architecture.md the map of the module:
// every Go package under the module root (what `go list ./...` lists,
// found as the go command finds it: testdata, directories starting with
// "." or "_", and nested modules left out) has a row in the tables of its
// "Packages" section, no row names a package that is gone, and a row is
// marked "(test-only)" exactly when the package is test-only: no program
// of the module (a main package) reaches it through the imports of
// non-test files. It also holds loop/doc.go's "One file per behaviour"
// paragraph to the non-test files of loop/.
func TestArchitectureMap(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found %d packages under %s; expected the whole module", len(pkgs), root)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mapProblems(pkgs, string(doc)) {
		t.Errorf("docs/architecture.md: %s", p)
	}
	loopDoc, err := os.ReadFile(filepath.Join(root, "loop/doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range loopListProblems(pkgs["loop"].files, string(loopDoc)) {
		t.Errorf("loop/doc.go: %s", p)
	}
}

// TestArchitectureMapCatches feeds the checkers maps that are wrong in
// each way they look for.
func TestArchitectureMapCatches(t *testing.T) {
	pkgs := map[string]*pkgInfo{
		"cmd/tool":      {main: true, files: []string{"main.go"}, imports: []string{"lib"}},
		"lib":           {files: []string{"lib.go"}},
		"internal/fake": {files: []string{"fake.go"}},
	}
	good := "# A\n\n## Packages\n\n| package | job |\n|---|---|\n| `cmd/tool` | the program |\n| `lib` | a library |\n| `internal/fake` (test-only) | a fake |\n\n## Next\n\n| `gone` | not in the Packages section |\n"
	if got := mapProblems(pkgs, good); len(got) != 0 {
		t.Fatalf("a true map: %q", got)
	}
	bad := map[string]string{
		"a package missing":          strings.Replace(good, "| `lib` | a library |\n", "", 1),
		"a package that is gone":     strings.Replace(good, "## Next", "| `old` | gone |\n\n## Next", 1),
		"a test-only mark missing":   strings.Replace(good, "`internal/fake` (test-only)", "`internal/fake`", 1),
		"a wrong test-only mark":     strings.Replace(good, "`lib` |", "`lib` (test-only) |", 1),
		"a package listed twice":     strings.Replace(good, "## Next", "| `lib` | again |\n\n## Next", 1),
		"no Packages section":        strings.Replace(good, "## Packages", "## Modules", 1),
		"a row outside of a section": strings.Replace(good, "| `lib` | a library |\n", "", 1) + "| `lib` | a library |\n",
	}
	for name, doc := range bad {
		if got := mapProblems(pkgs, doc); len(got) == 0 {
			t.Errorf("%s: no problem found in\n%s", name, doc)
		}
	}
	// A library reached only through a test-only package is test-only.
	pkgs["internal/fake"].imports = []string{"internal/helper"}
	pkgs["internal/helper"] = &pkgInfo{files: []string{"helper.go"}}
	if got := mapProblems(pkgs, strings.Replace(good, "## Next", "| `internal/helper` | helps |\n\n## Next", 1)); len(got) != 1 || !strings.Contains(got[0], "internal/helper") {
		t.Errorf("a helper of a test-only package: %q", got)
	}

	loopDoc := "// Package loop runs.\n//\n// One file per behaviour: run.go (the run), final.go and\n// types.go hold the types. More.\n//\n// # Steps\npackage loop\n"
	if got := loopListProblems([]string{"doc.go", "final.go", "run.go", "types.go"}, loopDoc); len(got) != 0 {
		t.Fatalf("a true list: %q", got)
	}
	if got := loopListProblems([]string{"doc.go", "final.go", "run.go", "types.go", "new.go"}, loopDoc); len(got) != 1 || !strings.Contains(got[0], "new.go") {
		t.Errorf("a file missing from the list: %q", got)
	}
	if got := loopListProblems([]string{"doc.go", "run.go", "types.go"}, loopDoc); len(got) != 1 || !strings.Contains(got[0], "final.go") {
		t.Errorf("a file the list names that is gone: %q", got)
	}
	if got := loopListProblems([]string{"doc.go", "run.go"}, "// Package loop runs.\npackage loop\n"); len(got) == 0 {
		t.Errorf("no list: no problem found")
	}
}

// pkgInfo is one package of the module, by its directory.
type pkgInfo struct {
	main    bool     // package main: a program
	files   []string // its non-test Go files, base names
	imports []string // the module's packages its non-test files import, as directories
}

// modulePackages finds the module's packages under root, by directory
// relative to root: every directory with a Go file, test files included.
func modulePackages(t *testing.T, root string) map[string]*pkgInfo {
	t.Helper()
	modPath := modulePath(t, root)
	pkgs := map[string]*pkgInfo{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root {
				if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		dir := filepath.ToSlash(rel)
		p := pkgs[dir]
		if p == nil {
			p = &pkgInfo{}
			pkgs[dir] = p
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		p.files = append(p.files, d.Name())
		p.main = p.main || f.Name.Name == "main"
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(ip, modPath+"/"); ok && !slices.Contains(p.imports, rest) {
				p.imports = append(p.imports, rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// modulePath is the module path go.mod at root declares.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// mapRow matches a package named in the first cell of a table row, and
// its mark.
var mapRow = regexp.MustCompile("`([A-Za-z0-9_./-]+)`( \\(test-only\\))?")

// mapProblems compares the rows of doc's "Packages" section (from its
// "## Packages" heading to the next "## " heading) with pkgs: a row's
// first cell names one or more packages, each in backquotes, each
// followed by " (test-only)" when it is test-only.
func mapProblems(pkgs map[string]*pkgInfo, doc string) []string {
	var problems []string
	in, found := false, false
	rows := map[string]bool{} // package → marked test-only
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Packages"
			found = found || in
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range mapRow.FindAllStringSubmatch(cells[1], -1) {
			if _, dup := rows[m[1]]; dup {
				problems = append(problems, "package "+m[1]+" has two rows")
			}
			rows[m[1]] = m[2] != ""
		}
	}
	if !found {
		return []string{`no "## Packages" section`}
	}
	reached := programReach(pkgs)
	var dirs []string
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		marked, ok := rows[dir]
		testOnly := !reached[dir]
		switch {
		case !ok:
			what := "a package"
			if testOnly {
				what = "a test-only package (mark it \"(test-only)\")"
			}
			problems = append(problems, "no row for "+dir+", "+what+": add one to a table of the Packages section, saying what it owns")
		case testOnly && !marked:
			problems = append(problems, dir+" is test-only (no program of the module imports it, not even through other packages' non-test files): mark its row \"(test-only)\"")
		case !testOnly && marked:
			problems = append(problems, dir+" is marked \"(test-only)\", but a program of the module imports it: remove the mark")
		}
	}
	for name := range rows {
		if pkgs[name] == nil {
			problems = append(problems, "the row for "+name+" names no package of the module (moved or removed?)")
		}
	}
	sort.Strings(problems)
	return problems
}

// programReach is the set of packages the module's programs (its main
// packages) reach through the imports of non-test files.
func programReach(pkgs map[string]*pkgInfo) map[string]bool {
	reached := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if reached[dir] {
			return
		}
		reached[dir] = true
		if p := pkgs[dir]; p != nil {
			for _, imp := range p.imports {
				visit(imp)
			}
		}
	}
	for dir, p := range pkgs {
		if p.main {
			visit(dir)
		}
	}
	return reached
}

// goFileName matches a Go file named in loop/doc.go's list.
var goFileName = regexp.MustCompile(`\b[a-z0-9_]+\.go\b`)

// loopListProblems compares the paragraph of doc that starts with "One
// file per behaviour:" (to the next blank comment line) with files, the
// non-test files of package loop; doc.go need not list itself.
func loopListProblems(files []string, doc string) []string {
	start := strings.Index(doc, "One file per behaviour:")
	if start < 0 {
		return []string{`no "One file per behaviour:" paragraph listing the package's files`}
	}
	para := doc[start:]
	if end := strings.Index(para, "\n//\n"); end >= 0 {
		para = para[:end]
	}
	named := map[string]bool{}
	for _, f := range goFileName.FindAllString(para, -1) {
		named[f] = true
	}
	var problems []string
	for _, f := range files {
		if f != "doc.go" && !named[f] {
			problems = append(problems, "the \"One file per behaviour\" list does not name "+f+": say what it holds there")
		}
	}
	for f := range named {
		if !slices.Contains(files, f) {
			problems = append(problems, "the \"One file per behaviour\" list names "+f+", which is not a file of loop/")
		}
	}
	sort.Strings(problems)
	return problems
}
