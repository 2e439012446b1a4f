package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// callTool runs one call through run, as the host would, with root as the
// workspace, and returns the result text, whether it is an error, and the
// exit code.
func callTool(t *testing.T, root, tool, args string) (string, bool, int) {
	t.Helper()
	stdin := fmt.Sprintf(`{"tool":%q,"arguments":%s,"call_id":"c1"}`, tool, args)
	var stdout, stderr bytes.Buffer
	code := run("call", tool, strings.NewReader(stdin), &stdout, &stderr, root)
	if code == exitMisuse {
		t.Fatalf("%s %s: exit %d, stderr %q", tool, args, code, stderr.String())
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%s %s: stdout is not a result: %v\n%s", tool, args, err, stdout.String())
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("%s %s: content = %+v, want one text item", tool, args, res.Content)
	}
	if res.IsError != (code == exitToolError) {
		t.Fatalf("%s %s: is_error %v with exit %d", tool, args, res.IsError, code)
	}
	return res.Content[0].Text, res.IsError, code
}

// mustOK calls a tool and fails the test on a tool error.
func mustOK(t *testing.T, root, tool, args string) string {
	t.Helper()
	text, isErr, _ := callTool(t, root, tool, args)
	if isErr {
		t.Fatalf("%s %s: tool error %q", tool, args, text)
	}
	return text
}

// mustFail calls a tool and checks it fails with a message matching want.
func mustFail(t *testing.T, root, tool, args, want string) {
	t.Helper()
	// Messages name the mount's guest path, here the test's directory.
	want = strings.ReplaceAll(want, "/workspace", regexp.QuoteMeta(root))
	text, isErr, code := callTool(t, root, tool, args)
	if !isErr || code != exitToolError {
		t.Fatalf("%s %s: got success %q, want an error matching %q", tool, args, text, want)
	}
	if !regexp.MustCompile(want).MatchString(text) {
		t.Fatalf("%s %s: error %q does not match %q", tool, args, text, want)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDescribePrintsManifest(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run("describe", "", strings.NewReader(""), &stdout, &stderr, t.TempDir()); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var m struct {
		Protocol string `json:"protocol"`
		Name     string `json:"name"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("describe output is not JSON: %v", err)
	}
	if m.Protocol != "agenthost/1" || m.Name != "core" || len(m.Tools) != 5 {
		t.Fatalf("manifest = %+v", m)
	}
}

// TestManifestSchemas checks that every tool in the manifest is served, every
// schema is strict, and the struct each tool decodes into matches the schema.
func TestManifestSchemas(t *testing.T) {
	var m struct {
		Version  string `json:"version"`
		Requests struct {
			FS []struct{ Guest, Access, Reason string } `json:"fs"`
		} `json:"requests"`
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema struct {
				Type                 string   `json:"type"`
				Required             []string `json:"required"`
				AdditionalProperties *bool    `json:"additionalProperties"`
				Properties           map[string]struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Requests.FS) != 1 || m.Requests.FS[0].Guest != "*" || m.Requests.FS[0].Access != "rw" || m.Requests.FS[0].Reason == "" {
		t.Errorf("requests.fs = %+v, want one rw request for every mount (\"*\") with a reason", m.Requests.FS)
	}
	argTypes := map[string]any{
		"read_file": readFileArgs{}, "write_file": writeFileArgs{}, "list_dir": listDirArgs{},
		"search": searchArgs{}, "edit": editArgs{},
	}
	name := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	var seen []string
	for _, tool := range m.Tools {
		seen = append(seen, tool.Name)
		s := tool.InputSchema
		if !name.MatchString(tool.Name) || tool.Description == "" {
			t.Errorf("tool %q: bad name or empty description", tool.Name)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("tool %s: schema must be type object with additionalProperties false", tool.Name)
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("tool %s: required %q is not a property", tool.Name, r)
			}
		}
		var fields []string
		if v, ok := argTypes[tool.Name]; ok {
			b, _ := json.Marshal(v)
			var obj map[string]any
			json.Unmarshal(b, &obj)
			for f := range obj {
				fields = append(fields, f)
			}
		} else {
			t.Errorf("tool %s has no handler", tool.Name)
		}
		var props []string
		for p, ps := range s.Properties {
			props = append(props, p)
			if ps.Type == "" || ps.Description == "" {
				t.Errorf("tool %s: property %s needs a type and a description", tool.Name, p)
			}
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("tool %s: schema properties %v, arguments struct fields %v", tool.Name, props, fields)
		}
		// The tool must be dispatched (an empty call may fail, but not as unknown).
		if _, err := call(&workspace{root: t.TempDir()}, tool.Name, nil); err != nil && strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("tool %s is not dispatched", tool.Name)
		}
	}
	slices.Sort(seen)
	if want := []string{"edit", "list_dir", "read_file", "search", "write_file"}; !slices.Equal(seen, want) {
		t.Errorf("tools = %v, want %v", seen, want)
	}
}

func TestProtocolMisuse(t *testing.T) {
	for _, tc := range []struct {
		name, mode, tool, stdin, want string
	}{
		{"no mode", "", "read_file", `{}`, `AGENTHOST_MODE is ""`},
		{"bad mode", "run", "read_file", `{}`, `AGENTHOST_MODE is "run"`},
		{"stdin not json", "call", "read_file", `hello`, `not a JSON object`},
		{"tool mismatch", "call", "read_file", `{"tool":"edit","arguments":{}}`, `AGENTHOST_TOOL is "read_file" but the request names "edit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.mode, tc.tool, strings.NewReader(tc.stdin), &stdout, &stderr, t.TempDir())
			if code != exitMisuse {
				t.Fatalf("exit %d, want %d", code, exitMisuse)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not contain %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestToolFromRequestWhenEnvUnset(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "hello\n"})
	var stdout, stderr bytes.Buffer
	code := run("call", "", strings.NewReader(`{"tool":"read_file","arguments":{"path":"a.txt"},"call_id":"x"}`), &stdout, &stderr, root)
	if code != exitOK || !strings.Contains(stdout.String(), `hello`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestArguments(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	// Arguments as a JSON string holding the object, as some models send them.
	if got := mustOK(t, root, "read_file", `"{\"path\":\"a.txt\"}"`); !strings.Contains(got, "one") {
		t.Errorf("string arguments: got %q", got)
	}
	mustFail(t, root, "read_file", `{"path":"a.txt","bogus":1}`, `read_file: invalid arguments: .*unknown field "bogus"`)
	mustFail(t, root, "read_file", `{"path":7}`, `read_file: invalid arguments`)
	mustFail(t, root, "read_file", `null`, `read_file: path is required`)
	mustFail(t, root, "read_file", `"{not json"`, `read_file: invalid arguments`)
	mustFail(t, root, "frobnicate", `{}`, `unknown tool "frobnicate"`)
}

func TestReadFile(t *testing.T) {
	root := t.TempDir()
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeTree(t, root, map[string]string{
		"src/main.go": "package main\r\n\nfunc main() {}\n",
		"long.txt":    long.String(),
		"empty.txt":   "",
		"wide.txt":    strings.Repeat("é", 3000) + "\n",
		"bin.dat":     "abc\x00def",
	})
	if err := os.WriteFile(filepath.Join(root, "big.txt"), bytes.Repeat([]byte("x"), maxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, args, want string
	}{
		{"whole file with numbers, CRLF trimmed", `{"path":"src/main.go"}`, "     1\tpackage main\n     2\t\n     3\tfunc main() {}\n"},
		{"absolute path under root", `{"path":` + quote(filepath.Join(root, "src/main.go")) + `,"offset":3}`, "     3\tfunc main() {}\n"},
		{"offset and limit", `{"path":"long.txt","offset":10,"limit":2}`, "    10\tline 10\n    11\tline 11\n(showing lines 10-11 of 2500; call read_file with offset 12 to continue)\n"},
		{"empty file", `{"path":"empty.txt"}`, "empty.txt is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, root, "read_file", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("default limit pages at 2000 lines", func(t *testing.T) {
		got := mustOK(t, root, "read_file", `{"path":"long.txt"}`)
		if !strings.Contains(got, "  2000\tline 2000\n") || strings.Contains(got, "line 2001") ||
			!strings.HasSuffix(got, "(showing lines 1-2000 of 2500; call read_file with offset 2001 to continue)\n") {
			t.Errorf("got ...%q", got[max(0, len(got)-200):])
		}
	})
	t.Run("long line clipped on a rune boundary", func(t *testing.T) {
		got := mustOK(t, root, "read_file", `{"path":"wide.txt"}`)
		if !strings.HasSuffix(got, " … [line truncated]\n") || !json.Valid([]byte(quote(got))) || strings.ContainsRune(got, '\uFFFD') {
			t.Errorf("got %q", got[len(got)-60:])
		}
	})

	for _, tc := range []struct {
		name, args, want string
	}{
		{"missing", `{"path":"nope.txt"}`, `^nope.txt: not found \(paths are relative to /workspace`},
		{"directory", `{"path":"src"}`, `^src: is a directory; use list_dir`},
		{"too large", `{"path":"big.txt"}`, `^big.txt: too large \(4\.0 MiB, over the 4\.0 MiB limit\)`},
		{"binary", `{"path":"bin.dat"}`, `^bin.dat: looks like a binary file`},
		{"offset past end", `{"path":"src/main.go","offset":9}`, `^src/main.go: offset 9 is past the end of the file \(3 lines\)`},
		{"negative offset", `{"path":"src/main.go","offset":-1}`, `must be at least 1`},
		{"dotdot escape", `{"path":"../secret"}`, `^path "../secret" is outside /workspace`},
		{"absolute outside", `{"path":"/etc/passwd"}`, `^path "/etc/passwd" is outside /workspace`},
	} {
		t.Run(tc.name, func(t *testing.T) { mustFail(t, root, "read_file", tc.args, tc.want) })
	}
}

func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"dir/keep.txt": "x"})

	if got := mustOK(t, root, "write_file", `{"path":"a/b/c.txt","content":"héllo\n"}`); got != "created a/b/c.txt (7 bytes)" {
		t.Errorf("got %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a/b/c.txt")); err != nil || string(b) != "héllo\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if got := mustOK(t, root, "write_file", `{"path":"a/b/c.txt","content":""}`); got != "overwrote a/b/c.txt (0 bytes)" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a/b/c.txt")); len(b) != 0 {
		t.Errorf("file = %q after writing empty content", b)
	}

	mustFail(t, root, "write_file", `{"path":"dir","content":"x"}`, `^dir: is a directory`)
	mustFail(t, root, "write_file", `{"path":".","content":"x"}`, `workspace directory itself`)
	mustFail(t, root, "write_file", `{"path":"x.txt"}`, `content is required`)
	mustFail(t, root, "write_file", `{"path":"dir/keep.txt/under","content":"x"}`, `^dir/keep.txt: a parent of this path is a file|dir/keep.txt/under`)
	mustFail(t, root, "write_file", `{"path":"../evil.txt","content":"x"}`, `outside /workspace`)
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "evil.txt")); err == nil {
		t.Fatal("write_file wrote outside the root")
	}
}

func TestListDir(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"b.txt": "", "a/x.go": "", "a/y/z.go": "", ".git/HEAD": "", "emptydir/.keep": "",
	})
	os.Remove(filepath.Join(root, "emptydir/.keep"))

	for _, tc := range []struct{ name, args, want string }{
		{"root", `{}`, ".git/\na/\nb.txt\nemptydir/\n"},
		{"subdir", `{"path":"a"}`, "a/x.go\na/y/\n"},
		{"recursive skips .git contents", `{"recursive":true}`, ".git/\na/\na/x.go\na/y/\na/y/z.go\nb.txt\nemptydir/\n"},
		{"recursive subdir", `{"path":"a/","recursive":true}`, "a/x.go\na/y/\na/y/z.go\n"},
		{"empty", `{"path":"emptydir"}`, "emptydir/ is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, root, "list_dir", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	mustFail(t, root, "list_dir", `{"path":"b.txt"}`, `^b.txt: not a directory`)
	mustFail(t, root, "list_dir", `{"path":"nope"}`, `^nope: not found`)
	mustFail(t, root, "list_dir", `{"path":".."}`, `outside /workspace`)

	t.Run("cap", func(t *testing.T) {
		root := t.TempDir()
		for i := range maxEntries + 5 {
			writeTree(t, root, map[string]string{fmt.Sprintf("d%02d/f%04d", i%10, i): ""})
		}
		got := mustOK(t, root, "list_dir", `{"recursive":true}`)
		if n := strings.Count(got, "\n"); n != maxEntries+1 || !strings.HasSuffix(got, "(stopped after 1000 entries; list a subdirectory to see more)\n") {
			t.Errorf("%d lines, ending %q", n, got[len(got)-80:])
		}
	})
}

func TestSearch(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.go":       "package a\nfunc Foo() {}\nfunc foo() {}\n",
		"sub/b.go":   "// Foo.Bar(x)\n",
		".git/x":     "Foo\n",
		"bin.dat":    "Foo\x00",
		"many.txt":   strings.Repeat("hit\n", 150),
		"sub/c.txt":  "nothing\n",
		"sub/d.txt":  strings.Repeat("y", 400) + "Foo\n",
		"other/e.md": "Foo.Bar(x)\n",
	})
	for _, tc := range []struct{ name, args, want string }{
		{"literal", `{"pattern":"Foo.Bar(x)"}`, "other/e.md:1: Foo.Bar(x)\nsub/b.go:1: // Foo.Bar(x)\n"},
		{"under a path", `{"pattern":"Bar","path":"sub"}`, "sub/b.go:1: // Foo.Bar(x)\n"},
		{"single file", `{"pattern":"func","path":"a.go"}`, "a.go:2: func Foo() {}\na.go:3: func foo() {}\n"},
		{"regexp", `{"pattern":"^func [A-Z]","regexp":true}`, "a.go:2: func Foo() {}\n"},
		{"case insensitive", `{"pattern":"FUNC FOO","case_insensitive":true,"path":"a.go"}`, "a.go:2: func Foo() {}\na.go:3: func foo() {}\n"},
		{"max results", `{"pattern":"func","max_results":1,"path":"a.go"}`, "a.go:2: func Foo() {}\n(stopped after 1 matches; narrow the path or the pattern, or raise max_results)\n"},
		{"no match", `{"pattern":"zebra"}`, `no matches for "zebra" under .`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, root, "search", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("default cap and clipped lines", func(t *testing.T) {
		got := mustOK(t, root, "search", `{"pattern":"hit"}`)
		if n := strings.Count(got, "many.txt:"); n != defaultHits || !strings.Contains(got, "(stopped after 100 matches") {
			t.Errorf("%d hits in %q", n, got[len(got)-100:])
		}
		got = mustOK(t, root, "search", `{"pattern":"Foo","path":"sub/d.txt"}`)
		if !strings.HasSuffix(got, " … [line truncated]\n") {
			t.Errorf("got %q", got)
		}
	})
	mustFail(t, root, "search", `{"pattern":"(","regexp":true}`, `^search: invalid regexp "\("`)
	mustFail(t, root, "search", `{"pattern":"x","path":"nope"}`, `^nope: not found`)
	mustFail(t, root, "search", `{"pattern":"x","path":"/"}`, `outside /workspace`)
	mustFail(t, root, "search", `{}`, `pattern is required`)
}

func TestEdit(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"f.go":   "a\nb\nTODO\nc\nTODO\n",
		"one.go": "x := 1\ny := 2\n",
	})
	if err := os.Chmod(filepath.Join(root, "one.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, root, "edit", `{"path":"one.go","old_string":"y := 2","new_string":"y := 3\nz := 4"}`); got != "edited one.go: replaced 1 occurrence, now lines 2-3" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "one.go")); string(b) != "x := 1\ny := 3\nz := 4\n" {
		t.Errorf("file = %q", b)
	}
	if info, _ := os.Stat(filepath.Join(root, "one.go")); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", info.Mode().Perm())
	}
	if got := mustOK(t, root, "edit", `{"path":"one.go","old_string":"x := 1\n","new_string":""}`); got != "edited one.go: replaced 1 occurrence at line 1" {
		t.Errorf("got %q", got)
	}

	mustFail(t, root, "edit", `{"path":"f.go","old_string":"TODO","new_string":"DONE"}`, `^f.go: old_string found 2 times, make old_string unique`)
	mustFail(t, root, "edit", `{"path":"f.go","old_string":"zzz","new_string":"y"}`, `^f.go: old_string not found`)
	mustFail(t, root, "edit", `{"path":"f.go","old_string":"","new_string":"y"}`, `old_string is required`)
	mustFail(t, root, "edit", `{"path":"f.go","old_string":"a"}`, `new_string is required`)
	mustFail(t, root, "edit", `{"path":"f.go","old_string":"a","new_string":"a"}`, `identical`)
	mustFail(t, root, "edit", `{"path":"nope.go","old_string":"a","new_string":"b"}`, `^nope.go: not found`)
	if b, _ := os.ReadFile(filepath.Join(root, "f.go")); string(b) != "a\nb\nTODO\nc\nTODO\n" {
		t.Errorf("failed edits changed the file: %q", b)
	}
}

func TestNoMount(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not-mounted")
	for tool, args := range map[string]string{
		"read_file": `{"path":"a.txt"}`, "list_dir": `{}`, "search": `{"pattern":"x"}`,
		"write_file": `{"path":"d/a.txt","content":"x"}`, "edit": `{"path":"a.txt","old_string":"a","new_string":"b"}`,
	} {
		mustFail(t, root, tool, args, `no file system is mounted at /workspace`)
	}
	if _, err := os.Stat(root); err == nil {
		t.Fatal("write_file created the workspace root")
	}
}

// TestReadFileOutputCap checks that a result stays under maxOutput even when
// 2000 lines would not, that it says where to continue, and that the encoded
// result does not inflate "<" and ">" to \u003c escapes.
func TestReadFileOutputCap(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("<a>", 300) // 900 bytes
	writeTree(t, root, map[string]string{"wide.html": strings.Repeat(line+"\n", 2000)})

	var stdout, stderr bytes.Buffer
	code := run("call", "read_file", strings.NewReader(`{"arguments":{"path":"wide.html"}}`), &stdout, &stderr, root)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if stdout.Len() > maxOutput+1024 {
		t.Errorf("encoded result is %d bytes, want about %d at most", stdout.Len(), maxOutput)
	}
	if strings.Contains(stdout.String(), `\u003c`) {
		t.Error("result escapes < as \\u003c")
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].Text
	shown := strings.Count(text, "\t"+line+"\n")
	want := fmt.Sprintf("(showing lines 1-%d of 2000; call read_file with offset %d to continue)\n", shown, shown+1)
	if shown == 0 || shown >= 2000 || !strings.HasSuffix(text, want) {
		t.Errorf("%d lines shown, ending %q; want ending %q", shown, text[len(text)-100:], want)
	}
}

func TestSearchFileCap(t *testing.T) {
	defer func(n int) { maxSearchFiles = n }(maxSearchFiles)
	maxSearchFiles = 3
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a": "x\n", "b": "x\n", "c": "x\n", "d": "x\n", "e": "y\n"})
	if got, want := mustOK(t, root, "search", `{"pattern":"x"}`), "a:1: x\nb:1: x\nc:1: x\n(stopped after reading 3 files; search a subdirectory to cover the rest)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := mustOK(t, root, "search", `{"pattern":"y"}`), `no matches for "y" under . (stopped after reading 3 files; search a subdirectory to cover the rest)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
