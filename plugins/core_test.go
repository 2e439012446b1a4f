package plugins_test

// The behaviour of the core plugin, tested on the embedded core.wasm in
// wazero: each test mounts host directories at guest paths, as the host
// does, and reads the results the guest writes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// Limits of core (plugins/core/src/tools.rs).
const (
	coreMaxFileSize    = 4 << 20
	coreMaxOutput      = 128 << 10
	coreMaxEntries     = 1000
	coreDefaultHits    = 100
	coreMaxSearchFiles = 20000
	coreMaxReadLines   = 2000
	coreMaxLineLen     = 2000
)

// mount is a host directory at a guest path.
type mount struct {
	host, guest string
	readOnly    bool
}

func fsConfig(mounts []mount) wazero.FSConfig {
	fc := wazero.NewFSConfig()
	for _, m := range mounts {
		if m.readOnly {
			fc = fc.WithReadOnlyDirMount(m.host, m.guest)
		} else {
			fc = fc.WithDirMount(m.host, m.guest)
		}
	}
	return fc
}

// ws mounts dir at /workspace.
func ws(dir string) []mount { return []mount{{host: dir, guest: "/workspace"}} }

// runCore runs one instance of core.wasm with the mounts, environment and
// stdin, and returns its exit code and output.
func runCore(t testing.TB, mounts []mount, env map[string]string, stdin string) outcome {
	t.Helper()
	r, cm := coreModule(t)
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("core").
		WithStdin(strings.NewReader(stdin)).WithStdout(&stdout).WithStderr(&stderr).
		WithFSConfig(fsConfig(mounts))
	for k, v := range env {
		cfg = cfg.WithEnv(k, v)
	}
	mod, err := r.InstantiateModule(context.Background(), cm, cfg)
	var code uint32
	var exit *sys.ExitError
	switch {
	case err == nil:
		mod.Close(context.Background())
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running core: %v (stderr %q)", err, stderr.String())
	}
	return outcome{code, stdout.String(), stderr.String()}
}

// coreCall makes one call as the host does (AGENTHOST_TOOL set, the
// request on stdin) and checks the answer's shape: one text item, is_error
// matching exit 1, nothing on stderr. It returns the text, whether it is
// an error, and stdout as written.
func coreCall(t testing.TB, mounts []mount, tool, args string) (text string, isErr bool, raw string) {
	t.Helper()
	stdin := `{"tool":` + strconv.Quote(tool) + `,"arguments":` + args + `,"call_id":"c1"}`
	out := runCore(t, mounts, map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": tool}, stdin)
	if out.code == 2 {
		t.Fatalf("%s %s: exit 2, stderr %q", tool, args, out.stderr)
	}
	return checkAnswer(t, tool+" "+args, out.stdout, out.code == 1), out.code == 1, out.stdout
}

// checkAnswer decodes one answer and checks its shape and is_error.
func checkAnswer(t testing.TB, what, stdout string, wantErr bool) string {
	t.Helper()
	var res callResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%s: stdout is not a result: %v\n%s", what, err, stdout)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("%s: content = %+v, want one text item", what, res.Content)
	}
	if res.IsError != wantErr {
		t.Fatalf("%s: is_error %v, want %v (%q)", what, res.IsError, wantErr, res.Content[0].Text)
	}
	return res.Content[0].Text
}

// mustOK calls a tool and fails the test on a tool error.
func mustOK(t testing.TB, mounts []mount, tool, args string) string {
	t.Helper()
	text, isErr, _ := coreCall(t, mounts, tool, args)
	if isErr {
		t.Fatalf("%s %s: tool error %q", tool, args, text)
	}
	return text
}

// mustFail calls a tool and checks it fails with a message matching the
// regular expression want.
func mustFail(t testing.TB, mounts []mount, tool, args, want string) {
	t.Helper()
	text, isErr, _ := coreCall(t, mounts, tool, args)
	if !isErr {
		t.Fatalf("%s %s: got success %q, want an error matching %q", tool, args, text, want)
	}
	if !regexp.MustCompile(want).MatchString(text) {
		t.Fatalf("%s %s: error %q does not match %q", tool, args, text, want)
	}
}

func writeTree(t testing.TB, root string, files map[string]string) {
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

// reused is an instance of core in reuse mode (AGENTHOST_REUSE=1): one
// request line in, one answer line out.
type reused struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan outcome
	// maxMemory is the largest size the guest's memory reached.
	maxMemory func() uint64
}

func startReused(t testing.TB, mounts []mount) *reused {
	t.Helper()
	rs := newReused(t, mounts)
	t.Cleanup(func() { rs.in.Close() })
	return rs
}

// newReused is startReused without closing the instance at the end of the
// test.
func newReused(t testing.TB, mounts []mount) *reused {
	t.Helper()
	r, cm := coreModule(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("core").
		WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_REUSE", "1").
		WithStdin(inR).WithStdout(outW).WithStderr(&stderr).WithFSConfig(fsConfig(mounts))
	mem := &watchedMemory{}
	ctx := experimental.WithMemoryAllocator(context.Background(), mem)
	rs := &reused{in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan outcome, 1), maxMemory: mem.max}
	go func() {
		mod, err := r.InstantiateModule(ctx, cm, cfg)
		var code uint32
		var exit *sys.ExitError
		switch {
		case err == nil:
			mod.Close(context.Background())
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			code = 1000 // a trap
			stderr.WriteString(err.Error())
		}
		outW.Close()
		inR.Close()
		rs.done <- outcome{code: code, stderr: stderr.String()}
	}()
	return rs
}

// call sends one request line and returns the answer line.
func (rs *reused) call(t testing.TB, line string) string {
	t.Helper()
	if _, err := io.WriteString(rs.in, line+"\n"); err != nil {
		t.Fatalf("writing request: %v", err)
	}
	answer, err := rs.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %.200q: %v", line, err)
	}
	return answer
}

// tool calls a tool and returns the text and whether it is an error.
func (rs *reused) tool(t testing.TB, tool, args string) (string, bool) {
	t.Helper()
	answer := rs.call(t, `{"tool":`+strconv.Quote(tool)+`,"arguments":`+args+`,"call_id":"r"}`)
	var res callResult
	if err := json.Unmarshal([]byte(answer), &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("%s %s: answer %q (%v)", tool, args, answer, err)
	}
	return res.Content[0].Text, res.IsError
}

// close closes stdin and waits for the instance to end.
func (rs *reused) close() outcome {
	rs.in.Close()
	rest, _ := io.ReadAll(rs.out)
	o := <-rs.done
	o.stdout = string(rest)
	return o
}

// watchedMemory is a wazero memory allocator that remembers the largest
// size the guest's memory grew to.
type watchedMemory struct {
	mu  sync.Mutex
	buf []byte
	top uint64
}

func (m *watchedMemory) Allocate(capacity, _ uint64) experimental.LinearMemory {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf = make([]byte, 0, capacity)
	return m
}

func (m *watchedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size > uint64(cap(m.buf)) {
		nb := make([]byte, size, size*2)
		copy(nb, m.buf)
		m.buf = nb
	}
	m.buf = m.buf[:size]
	m.top = max(m.top, size)
	return m.buf
}

func (m *watchedMemory) Free() {}

func (m *watchedMemory) max() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.top
}

func TestCoreDescribePrintsManifest(t *testing.T) {
	out := runCore(t, nil, map[string]string{"AGENTHOST_MODE": "describe"}, "")
	want, err := os.ReadFile("core/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if out.code != 0 || out.stdout != string(want) || out.stderr != "" {
		t.Fatalf("describe: exit %d, stderr %q, stdout %d bytes; want exit 0 and core/manifest.json (%d bytes)",
			out.code, out.stderr, len(out.stdout), len(want))
	}
}

// TestCoreManifestSchemas checks the manifest: every schema is strict and
// described, and the guest reads exactly the properties each schema names:
// a call with every property is not refused for its arguments, a call with
// one more is.
func TestCoreManifestSchemas(t *testing.T) {
	src, err := os.ReadFile("core/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Reuse    bool `json:"reuse"`
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
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	if !m.Reuse {
		t.Error("core's manifest does not declare reuse")
	}
	if len(m.Requests.FS) != 1 || m.Requests.FS[0].Guest != "*" || m.Requests.FS[0].Access != "rw" || m.Requests.FS[0].Reason == "" {
		t.Errorf("requests.fs = %+v, want one rw request for every mount (\"*\") with a reason", m.Requests.FS)
	}
	name := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	dir := t.TempDir()
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
		args := map[string]any{}
		for p, ps := range s.Properties {
			if ps.Type == "" || ps.Description == "" {
				t.Errorf("tool %s: property %s needs a type and a description", tool.Name, p)
			}
			switch ps.Type {
			case "string":
				args[p] = "x"
			case "integer":
				args[p] = 1
			case "boolean":
				args[p] = false
			default:
				t.Errorf("tool %s: property %s has type %q", tool.Name, p, ps.Type)
			}
		}
		b, _ := json.Marshal(args)
		text, _, _ := coreCall(t, ws(dir), tool.Name, string(b))
		if strings.Contains(text, "unknown tool") || strings.Contains(text, "invalid arguments") {
			t.Errorf("tool %s with every property of its schema: %q", tool.Name, text)
		}
		args["zzz"] = 1
		b, _ = json.Marshal(args)
		if text, isErr, _ := coreCall(t, ws(dir), tool.Name, string(b)); !isErr || !strings.Contains(text, `invalid arguments: unknown field "zzz"`) {
			t.Errorf("tool %s with a property its schema does not have: %q", tool.Name, text)
		}
	}
	slices.Sort(seen)
	if want := []string{"edit", "list_dir", "read_file", "search", "write_file"}; !slices.Equal(seen, want) {
		t.Errorf("tools = %v, want %v", seen, want)
	}
}

func TestCoreProtocolMisuse(t *testing.T) {
	for _, tc := range []struct {
		name, mode, tool, stdin, want string
	}{
		{"no mode", "", "read_file", `{}`, `core: AGENTHOST_MODE is "", want "describe" or "call"`},
		{"bad mode", "run<", "read_file", `{}`, `core: AGENTHOST_MODE is "run\u003c", want "describe" or "call"`},
		{"stdin not json", "call", "read_file", `hello`, `core: the request on stdin is not a JSON object {"tool","arguments","call_id"}: invalid character 'h'`},
		{"stdin empty", "call", "read_file", ``, `not a JSON object {"tool","arguments","call_id"}: unexpected end of JSON input`},
		{"stdin an array", "call", "read_file", `[1]`, `not a JSON object {"tool","arguments","call_id"}: want an object, got an array`},
		{"tool not a string", "call", "read_file", `{"tool":7}`, `not a JSON object {"tool","arguments","call_id"}: "tool" must be a string, not a number`},
		{"trailing text", "call", "read_file", `{"tool":"read_file"} x`, `not a JSON object`},
		{"tool mismatch", "call", "read_file", `{"tool":"edit","arguments":{}}`, `core: AGENTHOST_TOOL is "read_file" but the request names "edit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runCore(t, nil, map[string]string{"AGENTHOST_MODE": tc.mode, "AGENTHOST_TOOL": tc.tool}, tc.stdin)
			if out.code != 2 {
				t.Fatalf("exit %d, want 2", out.code)
			}
			if !strings.Contains(out.stderr, tc.want) || !strings.HasSuffix(out.stderr, "\n") {
				t.Fatalf("stderr %q does not contain %q", out.stderr, tc.want)
			}
			if out.stdout != "" {
				t.Fatalf("stdout %q, want nothing", out.stdout)
			}
		})
	}
}

// TestCoreRequestCap: a request over 64 MiB is refused (exit 2) without
// being read whole.
func TestCoreRequestCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB to a guest")
	}
	stdin := `{"tool":"write_file","arguments":{"path":"a","content":"` + strings.Repeat("x", 64<<20) + `"}}`
	out := runCore(t, ws(t.TempDir()), map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_TOOL": "write_file"}, stdin)
	if out.code != 2 || out.stdout != "" || out.stderr != "core: the request on stdin is over 64 MiB\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
	}
	rs := startReused(t, ws(t.TempDir()))
	go func() { io.WriteString(rs.in, stdin+"\n") }() // ends when the guest stops reading
	rest, _ := io.ReadAll(rs.out)
	o := <-rs.done
	o.stdout = string(rest)
	if o.code != 2 || o.stdout != "" || o.stderr != "core: a request line is over 64 MiB\n" {
		t.Fatalf("reuse mode: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

func TestCoreToolFromRequestWhenEnvUnset(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "hello\n"})
	out := runCore(t, ws(dir), map[string]string{"AGENTHOST_MODE": "call"}, `{"tool":"read_file","arguments":{"path":"a.txt"},"call_id":"x"}`)
	if out.code != 0 || out.stdout != `{"content":[{"type":"text","text":"     1\thello\n"}],"is_error":false}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
	}
}

func TestCoreArguments(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	m := ws(dir)
	// Arguments as a JSON string holding the object, as some models send them.
	if got := mustOK(t, m, "read_file", `"{\"path\":\"a.txt\"}"`); !strings.Contains(got, "one") {
		t.Errorf("string arguments: got %q", got)
	}
	// A whole number written with a fraction or an exponent is an integer.
	if got := mustOK(t, m, "read_file", `{"path":"a.txt","offset":2.0,"limit":1e0}`); got != "     2\ttwo\n(showing lines 2-2 of 3; call read_file with offset 3 to continue)\n" {
		t.Errorf("offset 2.0: got %q", got)
	}
	// Keys repeat: the last one counts; null is the same as absent.
	if got := mustOK(t, m, "read_file", `{"path":"nope","path":"a.txt","offset":null}`); got != "     1\tone\n     2\ttwo\n     3\tthree\n" {
		t.Errorf("repeated key: got %q", got)
	}
	if got := mustOK(t, m, "read_file", `  {"path":"a.txt","limit":1}  `); !strings.HasPrefix(got, "     1\tone\n(showing") {
		t.Errorf("white space around the arguments: got %q", got)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"a.txt","bogus":1}`, `^read_file: invalid arguments: unknown field "bogus"$`},
		{"read_file", `{"path":7}`, `^read_file: invalid arguments: "path" must be a string, not a number$`},
		{"read_file", `{"path":"a.txt","offset":"2"}`, `^read_file: invalid arguments: "offset" must be an integer, not a string$`},
		{"read_file", `{"path":"a.txt","offset":1.5}`, `^read_file: invalid arguments: "offset" must be an integer, not 1.5$`},
		{"read_file", `{"path":"a.txt","offset":1e300}`, `^read_file: invalid arguments: "offset" is out of range: 1e300$`},
		{"read_file", `{"path":"a.txt","offset":99999999999999999999}`, `^read_file: invalid arguments: "offset" is out of range`},
		{"list_dir", `{"recursive":"yes"}`, `^list_dir: invalid arguments: "recursive" must be a boolean, not a string$`},
		{"write_file", `{"path":"x","content":[]}`, `^write_file: invalid arguments: "content" must be a string, not an array$`},
		{"read_file", `null`, `^read_file: path is required$`},
		{"read_file", `"null"`, `^read_file: path is required$`},
		{"read_file", `[1]`, `^read_file: invalid arguments: want a JSON object, got an array$`},
		{"read_file", `"{not json"`, `^read_file: invalid arguments: invalid character 'n' `},
		{"read_file", `"{\"path\":\"a.txt\"} {}"`, `^read_file: invalid arguments: more than one JSON value$`},
		{"frobnicate", `{}`, `^unknown tool "frobnicate"; core has read_file, write_file, list_dir, search and edit$`},
	} {
		mustFail(t, m, tc.tool, tc.args, tc.want)
	}
	// Without a request tool name or AGENTHOST_TOOL, the tool is unknown.
	out := runCore(t, m, map[string]string{"AGENTHOST_MODE": "call"}, `{"arguments":{}}`)
	if out.code != 1 || checkAnswer(t, "no tool", out.stdout, true) != `unknown tool ""; core has read_file, write_file, list_dir, search and edit` {
		t.Errorf("no tool: exit %d, stdout %q", out.code, out.stdout)
	}
}

func TestCoreReadFile(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeTree(t, dir, map[string]string{
		"src/main.go": "package main\r\n\nfunc main() {}\n",
		"long.txt":    long.String(),
		"empty.txt":   "",
		"wide.txt":    strings.Repeat("é", 3000) + "\n",
		"bin.dat":     "abc\x00def",
		"latin1.txt":  "caf\xe9\n",
	})
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("x"), coreMaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bigger.txt"), bytes.Repeat([]byte("x"), 5<<20+5<<20/4), 0o644); err != nil {
		t.Fatal(err)
	}
	m := ws(dir)
	for _, tc := range []struct {
		name, args, want string
	}{
		{"whole file with numbers, CRLF trimmed", `{"path":"src/main.go"}`, "     1\tpackage main\n     2\t\n     3\tfunc main() {}\n"},
		{"absolute path under the mount", `{"path":"/workspace/src/main.go","offset":3}`, "     3\tfunc main() {}\n"},
		{"dot elements", `{"path":"./src/../src//main.go","offset":3}`, "     3\tfunc main() {}\n"},
		{"offset and limit", `{"path":"long.txt","offset":10,"limit":2}`, "    10\tline 10\n    11\tline 11\n(showing lines 10-11 of 2500; call read_file with offset 12 to continue)\n"},
		{"empty file", `{"path":"empty.txt"}`, "empty.txt is empty"},
		{"invalid UTF-8 as U+FFFD", `{"path":"latin1.txt"}`, "     1\tcaf\uFFFD\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, m, "read_file", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("default limit pages at 2000 lines", func(t *testing.T) {
		got := mustOK(t, m, "read_file", `{"path":"long.txt"}`)
		if !strings.Contains(got, "  2000\tline 2000\n") || strings.Contains(got, "line 2001") ||
			!strings.HasSuffix(got, "(showing lines 1-2000 of 2500; call read_file with offset 2001 to continue)\n") {
			t.Errorf("got ...%q", got[max(0, len(got)-200):])
		}
	})
	t.Run("long line clipped on a rune boundary", func(t *testing.T) {
		got := mustOK(t, m, "read_file", `{"path":"wide.txt"}`)
		want := "     1\t" + strings.Repeat("é", 1000) + " … [line truncated]\n"
		if got != want {
			t.Errorf("got %q", got[max(0, len(got)-60):])
		}
	})

	for _, tc := range []struct {
		name, args, want string
	}{
		{"missing", `{"path":"nope.txt"}`, `^nope.txt: not found \(paths are relative to /workspace; use list_dir to see what exists\)$`},
		{"directory", `{"path":"src"}`, `^src: is a directory; use list_dir to list it$`},
		{"under a file", `{"path":"src/main.go/x"}`, `^src/main.go/x: a parent of this path is a file, not a directory$`},
		{"too large", `{"path":"big.txt"}`, `^big.txt: too large \(4\.0 MiB, over the 4\.0 MiB limit\); use search to find the lines you need$`},
		{"too large, rounded half to even", `{"path":"bigger.txt"}`, `^bigger.txt: too large \(6\.2 MiB, over the 4\.0 MiB limit\)`},
		{"binary", `{"path":"bin.dat"}`, `^bin.dat: looks like a binary file \(it contains NUL bytes\); only text files can be read$`},
		{"offset past end", `{"path":"src/main.go","offset":9}`, `^src/main.go: offset 9 is past the end of the file \(3 lines\)$`},
		{"negative offset", `{"path":"src/main.go","offset":-1}`, `^read_file: offset \(-1\) and limit \(0\) must be at least 1$`},
		{"no path", `{}`, `^read_file: path is required$`},
		{"dotdot escape", `{"path":"../secret"}`, `^path "../secret" is outside /workspace; the tools can only reach files under /workspace$`},
		{"absolute outside", `{"path":"/etc/passwd"}`, `^path "/etc/passwd" is outside /workspace`},
		{"quoted as Go quotes", `{"path":"/x\u0001\u00e9\u200b"}`, `^path "/x\\x01é\\u200b" is outside /workspace`},
	} {
		t.Run(tc.name, func(t *testing.T) { mustFail(t, m, "read_file", tc.args, tc.want) })
	}
}

func TestCoreWriteFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"dir/keep.txt": "x"})
	m := ws(dir)

	if got := mustOK(t, m, "write_file", `{"path":"a/b/c.txt","content":"héllo\n"}`); got != "created a/b/c.txt (7 bytes)" {
		t.Errorf("got %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/b/c.txt")); err != nil || string(b) != "héllo\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if got := mustOK(t, m, "write_file", `{"path":"a/b/c.txt","content":""}`); got != "overwrote a/b/c.txt (0 bytes)" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b/c.txt")); len(b) != 0 {
		t.Errorf("file = %q after writing empty content", b)
	}

	mustFail(t, m, "write_file", `{"path":"dir","content":"x"}`, `^dir: is a directory; name a file to write$`)
	mustFail(t, m, "write_file", `{"path":".","content":"x"}`, `^write_file: path "\." is the workspace directory itself; name a file$`)
	mustFail(t, m, "write_file", `{"path":"x.txt"}`, `^write_file: content is required \(use "" for an empty file\)$`)
	mustFail(t, m, "write_file", `{"content":"x"}`, `^write_file: path is required$`)
	mustFail(t, m, "write_file", `{"path":"dir/keep.txt/under","content":"x"}`, `^dir/keep.txt: a parent of this path is a file, not a directory$`)
	mustFail(t, m, "write_file", `{"path":"../evil.txt","content":"x"}`, `outside /workspace`)
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil.txt")); err == nil {
		t.Fatal("write_file wrote outside the mount")
	}
}

func TestCoreListDir(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"b.txt": "", "a/x.go": "", "a/y/z.go": "", ".git/HEAD": "", "emptydir/.keep": "",
	})
	os.Remove(filepath.Join(dir, "emptydir/.keep"))
	m := ws(dir)

	for _, tc := range []struct{ name, args, want string }{
		{"root", `{}`, ".git/\na/\nb.txt\nemptydir/\n"},
		{"subdir", `{"path":"a"}`, "a/x.go\na/y/\n"},
		{"recursive skips .git contents", `{"recursive":true}`, ".git/\na/\na/x.go\na/y/\na/y/z.go\nb.txt\nemptydir/\n"},
		{"recursive subdir", `{"path":"a/","recursive":true}`, "a/x.go\na/y/\na/y/z.go\n"},
		{"empty", `{"path":"emptydir"}`, "emptydir/ is empty"},
		{"absolute path", `{"path":"/workspace/a"}`, "a/x.go\na/y/\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, m, "list_dir", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	mustFail(t, m, "list_dir", `{"path":"b.txt"}`, `^b.txt: not a directory; use read_file to read a file$`)
	mustFail(t, m, "list_dir", `{"path":"nope"}`, `^nope: not found`)
	mustFail(t, m, "list_dir", `{"path":".."}`, `^path "\.\." is outside /workspace`)

	t.Run("cap", func(t *testing.T) {
		dir := t.TempDir()
		for i := range coreMaxEntries + 5 {
			writeTree(t, dir, map[string]string{fmt.Sprintf("d%02d/f%04d", i%10, i): ""})
		}
		got := mustOK(t, ws(dir), "list_dir", `{"recursive":true}`)
		if n := strings.Count(got, "\n"); n != coreMaxEntries+1 || !strings.HasPrefix(got, "d00/\nd00/f0000\nd00/f0010\n") ||
			!strings.HasSuffix(got, "(stopped after 1000 entries; list a subdirectory to see more)\n") {
			t.Errorf("%d lines: %q ... %q", n, got[:40], got[len(got)-80:])
		}
	})
}

func TestCoreSearch(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.go":       "package a\nfunc Foo() {}\nfunc foo() {}\n",
		"sub/b.go":   "// Foo.Bar(x)\n",
		".git/x":     "Foo\n",
		"bin.dat":    "Foo\x00",
		"many.txt":   strings.Repeat("hit\n", 150),
		"sub/c.txt":  "nothing\n",
		"sub/d.txt":  strings.Repeat("y", 400) + "Foo\n",
		"other/e.md": "Foo.Bar(x)\n",
		"crlf.txt":   "end\r\nfoo\r\n",
		"uni.txt":    "STRASSE ǅ\n",
	})
	m := ws(dir)
	for _, tc := range []struct{ name, args, want string }{
		{"literal", `{"pattern":"Foo.Bar(x)"}`, "other/e.md:1: Foo.Bar(x)\nsub/b.go:1: // Foo.Bar(x)\n"},
		{"under a path", `{"pattern":"Bar","path":"sub"}`, "sub/b.go:1: // Foo.Bar(x)\n"},
		{"single file", `{"pattern":"func","path":"a.go"}`, "a.go:2: func Foo() {}\na.go:3: func foo() {}\n"},
		{"regexp", `{"pattern":"^func [A-Z]","regexp":true}`, "a.go:2: func Foo() {}\n"},
		{"lines without CR", `{"pattern":"d$","regexp":true,"path":"crlf.txt"}`, "crlf.txt:1: end\n"},
		{"case insensitive", `{"pattern":"FUNC FOO","case_insensitive":true,"path":"a.go"}`, "a.go:2: func Foo() {}\na.go:3: func foo() {}\n"},
		{"case insensitive beyond ASCII", `{"pattern":"ǆ","case_insensitive":true,"path":"uni.txt"}`, "uni.txt:1: STRASSE ǅ\n"},
		{"max results", `{"pattern":"func","max_results":1,"path":"a.go"}`, "a.go:2: func Foo() {}\n(stopped after 1 matches; narrow the path or the pattern, or raise max_results)\n"},
		{"no match", `{"pattern":"zebra"}`, `no matches for "zebra" under .`},
		{"no match in a subdirectory", `{"pattern":"zebra\t","path":"sub/"}`, `no matches for "zebra\t" under sub`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, m, "search", tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("default cap and clipped lines", func(t *testing.T) {
		got := mustOK(t, m, "search", `{"pattern":"hit"}`)
		if n := strings.Count(got, "many.txt:"); n != coreDefaultHits || !strings.HasSuffix(got, "many.txt:100: hit\n(stopped after 100 matches; narrow the path or the pattern, or raise max_results)\n") {
			t.Errorf("%d hits in %q", n, got[len(got)-100:])
		}
		got = mustOK(t, m, "search", `{"pattern":"Foo","path":"sub/d.txt"}`)
		if want := "sub/d.txt:1: " + strings.Repeat("y", 300) + " … [line truncated]\n"; got != want {
			t.Errorf("got %q", got)
		}
	})
	mustFail(t, m, "search", `{"pattern":"(","regexp":true}`, `^search: invalid regexp "\(": unclosed group at byte 0$`)
	mustFail(t, m, "search", `{"pattern":"a{2,1}","regexp":true}`, `^search: invalid regexp "a\{2,1\}": invalid repetition count range`)
	mustFail(t, m, "search", `{"pattern":"x","path":"nope"}`, `^nope: not found`)
	mustFail(t, m, "search", `{"pattern":"x","path":"/"}`, `^path "/" is outside /workspace`)
	mustFail(t, m, "search", `{}`, `^search: pattern is required$`)
	mustFail(t, m, "search", `{"pattern":"x","max_results":-2}`, `^search: max_results \(-2\) must be at least 1$`)
}

// TestCoreSearchNesting: a pattern as deeply nested as the parser allows
// compiles within the guest's stack; one level more is refused.
func TestCoreSearchNesting(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "abc\n"})
	deep := strings.Repeat("(", 249) + "b" + strings.Repeat(")", 249)
	if got := mustOK(t, ws(dir), "search", `{"pattern":"`+deep+`","regexp":true}`); got != "a.txt:1: abc\n" {
		t.Errorf("got %q", got)
	}
	deeper := strings.Repeat("(", 300) + "b" + strings.Repeat(")", 300)
	mustFail(t, ws(dir), "search", `{"pattern":"`+deeper+`","regexp":true}`, `^search: invalid regexp "\(\(\(.*exceed`)
}

func TestCoreSearchFileCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20001 files")
	}
	dir := t.TempDir()
	for i := range coreMaxSearchFiles + 1 {
		name := fmt.Sprintf("f%05d", i)
		body := "y\n"
		if i < 3 {
			body = "x\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "z"), []byte("x z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := ws(dir)
	if got, want := mustOK(t, m, "search", `{"pattern":"x"}`), "f00000:1: x\nf00001:1: x\nf00002:1: x\n(stopped after reading 20000 files; search a subdirectory to cover the rest)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := mustOK(t, m, "search", `{"pattern":"z"}`), `no matches for "z" under . (stopped after reading 20000 files; search a subdirectory to cover the rest)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCoreEdit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"f.go":     "a\nb\nTODO\nc\nTODO\n",
		"one.go":   "x := 1\ny := 2\n",
		"bytes.go": "caf\xe9 = 1\nn := 2\n",
	})
	if err := os.Chmod(filepath.Join(dir, "one.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := ws(dir)
	if got := mustOK(t, m, "edit", `{"path":"one.go","old_string":"y := 2","new_string":"y := 3\nz := 4"}`); got != "edited one.go: replaced 1 occurrence, now lines 2-3" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "one.go")); string(b) != "x := 1\ny := 3\nz := 4\n" {
		t.Errorf("file = %q", b)
	}
	if info, _ := os.Stat(filepath.Join(dir, "one.go")); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", info.Mode().Perm())
	}
	if got := mustOK(t, m, "edit", `{"path":"one.go","old_string":"x := 1\n","new_string":""}`); got != "edited one.go: replaced 1 occurrence at line 1" {
		t.Errorf("got %q", got)
	}
	// Bytes that are not UTF-8 stay as they are around the edit.
	if got := mustOK(t, m, "edit", `{"path":"bytes.go","old_string":"n := 2","new_string":"n := 3"}`); got != "edited bytes.go: replaced 1 occurrence at line 2" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bytes.go")); string(b) != "caf\xe9 = 1\nn := 3\n" {
		t.Errorf("file = %q", b)
	}

	mustFail(t, m, "edit", `{"path":"f.go","old_string":"TODO","new_string":"DONE"}`, `^f.go: old_string found 2 times, make old_string unique by including more surrounding lines$`)
	mustFail(t, m, "edit", `{"path":"f.go","old_string":"zzz","new_string":"y"}`, `^f.go: old_string not found; it must match the file exactly, whitespace included \(read_file shows the current text\)$`)
	mustFail(t, m, "edit", `{"path":"f.go","old_string":"","new_string":"y"}`, `^edit: old_string is required and must not be empty; use write_file to create a file$`)
	mustFail(t, m, "edit", `{"path":"f.go","old_string":"a"}`, `^edit: new_string is required \(use "" to delete old_string\)$`)
	mustFail(t, m, "edit", `{"path":"f.go","old_string":"a","new_string":"a"}`, `^edit: old_string and new_string are identical; nothing to change$`)
	mustFail(t, m, "edit", `{"old_string":"a","new_string":"b"}`, `^edit: path is required$`)
	mustFail(t, m, "edit", `{"path":"nope.go","old_string":"a","new_string":"b"}`, `^nope.go: not found`)
	if b, _ := os.ReadFile(filepath.Join(dir, "f.go")); string(b) != "a\nb\nTODO\nc\nTODO\n" {
		t.Errorf("failed edits changed the file: %q", b)
	}
}

// TestCoreEditCountsApart: occurrences are counted without overlap, as
// strings.Count does.
func TestCoreEditCountsApart(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaa\n", "b.txt": "aaaa\n"})
	if got := mustOK(t, ws(dir), "edit", `{"path":"a.txt","old_string":"aa","new_string":"b"}`); got != "edited a.txt: replaced 1 occurrence at line 1" {
		t.Errorf("got %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "ba\n" {
		t.Errorf("a.txt = %q", b)
	}
	mustFail(t, ws(dir), "edit", `{"path":"b.txt","old_string":"aa","new_string":"b"}`, `^b.txt: old_string found 2 times`)
}

func TestCoreNoMount(t *testing.T) {
	for tool, args := range map[string]string{
		"read_file": `{"path":"a.txt"}`, "list_dir": `{}`, "search": `{"pattern":"x"}`,
		"write_file": `{"path":"d/a.txt","content":"x"}`, "edit": `{"path":"a.txt","old_string":"a","new_string":"b"}`,
	} {
		mustFail(t, nil, tool, args, `: no file system is mounted at /workspace; the agent's configuration must grant a mount there \(mount \{ guest = "/workspace" \}\)$`)
	}
}

// TestCoreReadFileOutputCap checks that a result stays under the output cap
// even when 2000 lines would not, that it says where to continue, and that
// the encoded result does not inflate "<" and ">" to \u003c escapes.
func TestCoreReadFileOutputCap(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("<a>", 300) // 900 bytes
	writeTree(t, dir, map[string]string{"wide.html": strings.Repeat(line+"\n", 2000)})
	text, _, raw := coreCall(t, ws(dir), "read_file", `{"path":"wide.html"}`)
	if len(raw) > coreMaxOutput+1024 {
		t.Errorf("encoded result is %d bytes, want about %d at most", len(raw), coreMaxOutput)
	}
	if strings.Contains(raw, `\u003c`) {
		t.Error("result escapes < as \\u003c")
	}
	shown := strings.Count(text, "\t"+line+"\n")
	want := fmt.Sprintf("(showing lines 1-%d of 2000; call read_file with offset %d to continue)\n", shown, shown+1)
	if shown == 0 || shown >= 2000 || !strings.HasSuffix(text, want) || len(text) > coreMaxOutput+len(want) {
		t.Errorf("%d lines shown (%d bytes), ending %q; want ending %q", shown, len(text), text[len(text)-100:], want)
	}
}

// TestCoreMounts checks that core serves every mount it is granted, wherever
// it is: relative paths start at the first, absolute paths reach any, and a
// path under none is refused naming them all.
func TestCoreMounts(t *testing.T) {
	files, docs := t.TempDir(), t.TempDir()
	writeTree(t, files, map[string]string{"a.txt": "in files\n"})
	writeTree(t, docs, map[string]string{"guide.md": "in docs\n"})
	m := []mount{{host: files, guest: "/files"}, {host: docs, guest: "/srv/docs"}}

	if got := mustOK(t, m, "read_file", `{"path":"a.txt"}`); got != "     1\tin files\n" {
		t.Errorf("relative path in the first mount: %q", got)
	}
	if got := mustOK(t, m, "read_file", `{"path":"/srv/docs/guide.md"}`); got != "     1\tin docs\n" {
		t.Errorf("absolute path in the second mount: %q", got)
	}
	if got := mustOK(t, m, "list_dir", `{"path":"/srv/docs"}`); got != "/srv/docs/guide.md\n" {
		t.Errorf("list_dir of the second mount = %q, want absolute paths the model can pass back", got)
	}
	if got := mustOK(t, m, "search", `{"pattern":"in","path":"/srv/docs"}`); got != "/srv/docs/guide.md:1: in docs\n" {
		t.Errorf("search in the second mount = %q", got)
	}
	if got := mustOK(t, m, "write_file", `{"path":"/srv/docs/new.txt","content":"x"}`); got != "created /srv/docs/new.txt (1 bytes)" {
		t.Errorf("write_file in the second mount: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(docs, "new.txt")); err != nil || string(b) != "x" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	for _, p := range []string{"/srv/secret.txt", "../secret.txt", "/srv", "/"} {
		mustFail(t, m, "read_file", `{"path":"`+p+`"}`,
			`^path "`+regexp.QuoteMeta(p)+`" is outside the mounted directories; the tools can only reach files under /files, /srv/docs \(relative paths start at /files\)$`)
	}
}

// answer is a result as the guest writes it, for comparing bytes.
type answer struct {
	Content []answerContent `json:"content"`
	IsError bool            `json:"is_error"`
}

type answerContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// readFileRef is read_file's selection of lines, numbering and notes,
// written plainly: the whole file split into lines.
func readFileRef(data []byte, show string, offset, limit int) (string, bool) {
	if len(data) == 0 {
		return show + " is empty", false
	}
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	start := max(offset, 1)
	if start > len(ls) {
		return fmt.Sprintf("%s: offset %d is past the end of the file (%d lines)", show, start, len(ls)), true
	}
	if limit == 0 || limit > coreMaxReadLines {
		limit = coreMaxReadLines
	}
	end := min(start-1+limit, len(ls))
	var b strings.Builder
	for n := start; n <= end; n++ {
		l := strings.TrimSuffix(ls[n-1], "\r")
		if len(l) > coreMaxLineLen {
			cut := coreMaxLineLen
			for cut > 0 && l[cut]&0xc0 == 0x80 {
				cut--
			}
			l = l[:cut] + " … [line truncated]"
		}
		line := fmt.Sprintf("%6d\t%s\n", n, l)
		if b.Len()+len(line) > coreMaxOutput && n > start {
			end = n - 1
			break
		}
		b.WriteString(line)
	}
	if end < len(ls) {
		fmt.Fprintf(&b, "(showing lines %d-%d of %d; call read_file with offset %d to continue)\n", start, end, len(ls), end+1)
	}
	return b.String(), false
}

// TestCoreReadFileLines: read_file shows what splitting the whole file
// would, for every offset and several limits, on files with and without a
// final newline, CRLF endings, empty lines, long lines, bytes that are not
// UTF-8 and enough text to hit the output cap; and the result is encoded
// as Go's encoding/json encodes it (without HTML escaping).
func TestCoreReadFileLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("é", coreMaxLineLen)
	files := map[string]string{
		"empty":     "",
		"newline":   "\n",
		"two":       "\n\n",
		"plain":     "one\ntwo\nthree\n",
		"no final":  "one\ntwo\nthree",
		"crlf":      "one\r\ntwo\r\n\r\nfour\r\n",
		"cr alone":  "a\rb\n\r\n\r",
		"blank mid": "a\n\n\nb",
		"long":      "short\n" + long + "\n" + long + long + "\nend",
		"capped":    strings.Repeat(strings.Repeat("x", 1500)+"\n", 200),
		"bytes":     "\xff\xfe<a&b>\n\u2028\u2029\x7f\x01\x1f\"\\\n\xe6\x97x\xf0\x9f\x98\n\t\b\f end\xc3",
	}
	rs := startReused(t, ws(dir))
	for name, text := range files {
		file := strings.ReplaceAll(name, " ", "_") + ".txt"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(text, "\n") + 2
		for offset := 0; offset <= n; offset++ {
			for _, limit := range []int{0, 1, 2, 3, 150} {
				args := fmt.Sprintf(`{"path":%q,"offset":%d,"limit":%d}`, file, offset, limit)
				got := rs.call(t, `{"tool":"read_file","arguments":`+args+`}`)
				wantText, wantErr := readFileRef([]byte(text), file, offset, limit)
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				enc.Encode(answer{Content: []answerContent{{Type: "text", Text: wantText}}, IsError: wantErr})
				if got != want.String() {
					t.Fatalf("%s, offset %d, limit %d:\n got %s\nwant %s", name, offset, limit, got, want.String())
				}
			}
		}
	}
	if o := rs.close(); o.code != 0 || o.stdout != "" {
		t.Fatalf("instance ended with %+v", o)
	}
}

// TestCoreServe: in reuse mode every request line gets one answer line,
// tool errors included, blank lines are skipped, and an unreadable request
// ends the instance with exit 2 and no answer.
func TestCoreServe(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "one\ntwo\n"})
	rs := startReused(t, ws(dir))
	if got, isErr := rs.tool(t, "read_file", `{"path":"a.txt","offset":2}`); isErr || got != "     2\ttwo\n" {
		t.Errorf("answer 1 = %q (error %v)", got, isErr)
	}
	if got, isErr := rs.tool(t, "read_file", `{"path":"missing.txt"}`); !isErr || !strings.HasPrefix(got, "missing.txt: not found") {
		t.Errorf("answer 2 = %q (error %v)", got, isErr)
	}
	io.WriteString(rs.in, "\n  \n")
	if got, isErr := rs.tool(t, "write_file", `{"path":"b.txt","content":"x"}`); isErr || got != "created b.txt (1 bytes)" {
		t.Errorf("answer 3 = %q (error %v)", got, isErr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || string(b) != "x" {
		t.Errorf("b.txt = %q, %v", b, err)
	}
	if o := rs.close(); o.code != 0 || o.stdout != "" || o.stderr != "" {
		t.Errorf("end of stdin: %+v, want exit 0 and nothing more", o)
	}

	// The last request may end without a newline.
	out := runCore(t, ws(dir), map[string]string{"AGENTHOST_MODE": "call", "AGENTHOST_REUSE": "1"},
		`{"tool":"read_file","arguments":{"path":"a.txt","limit":1}}`+"\n"+`{"tool":"list_dir","arguments":{}}`)
	if want := `{"content":[{"type":"text","text":"     1\tone\n(showing lines 1-1 of 2; call read_file with offset 2 to continue)\n"}],"is_error":false}` + "\n" +
		`{"content":[{"type":"text","text":"a.txt\nb.txt\n"}],"is_error":false}` + "\n"; out.code != 0 || out.stdout != want {
		t.Errorf("two requests: exit %d, stdout %q", out.code, out.stdout)
	}

	rs = startReused(t, ws(dir))
	io.WriteString(rs.in, "nope\n")
	if o := rs.close(); o.code != 2 || o.stdout != "" || !strings.Contains(o.stderr, "not a JSON object") {
		t.Fatalf("garbage request: %+v; want exit 2 and no answer", o)
	}
}

// TestCoreReuseMemoryStaysFlat: a reused instance serving the same call
// again and again does not grow its memory after the first calls.
func TestCoreReuseMemoryStaysFlat(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	writeTree(t, dir, map[string]string{"a.txt": sb.String(), "big.txt": strings.Repeat("x", 1<<20) + "\n"})
	rs := startReused(t, ws(dir))
	calls := func(n int) {
		for range n {
			if _, isErr := rs.tool(t, "read_file", `{"path":"a.txt","offset":150,"limit":100}`); isErr {
				t.Fatal("read_file failed")
			}
			if _, isErr := rs.tool(t, "search", `{"pattern":"line 2[0-9]","regexp":true}`); isErr {
				t.Fatal("search failed")
			}
			if _, isErr := rs.tool(t, "read_file", `{"path":"big.txt"}`); isErr {
				t.Fatal("read_file big.txt failed")
			}
		}
	}
	calls(5)
	before := rs.maxMemory()
	calls(200)
	if after := rs.maxMemory(); after != before {
		t.Errorf("guest memory grew from %d to %d bytes over 600 more calls", before, after)
	}
	rs.close()
}

// TestCoreStrings: strings in the arguments reach the file system as
// encoding/json decodes them (escapes, surrogate pairs, lone surrogates
// and bytes that are not UTF-8 as U+FFFD), and quoted patterns in messages
// read as Go's strconv.Quote writes them.
func TestCoreStrings(t *testing.T) {
	dir := t.TempDir()
	rs := startReused(t, ws(dir))
	literals := []string{
		`"plain"`, `""`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u65e5\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`,
		`"\ud83d\ud83d\ude00"`, "\"\xff\xfe\"", "\"caf\xe9\"", "\"\xe6\x97x\"", "\"\xf0\x9f\x98\"", "\"\xc3\"",
		"\"\x7f\u0085\u00a0\u00ad\u0301\u200b\u2028\ufeff\ue000\U0001F600\U0010FFFF\"", `"\u0000\u0007\u000b"`,
	}
	for i, lit := range literals {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		name := fmt.Sprintf("s%d", i)
		if _, isErr := rs.tool(t, "write_file", `{"path":"`+name+`","content":`+lit+`}`); isErr {
			t.Fatalf("write_file %s failed", lit)
		}
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("content %s: file holds %q, want %q", lit, b, want)
		}
		if want == "" {
			continue
		}
		os.Remove(filepath.Join(dir, name))
		got, _ := rs.tool(t, "search", `{"pattern":`+lit+`}`)
		if wantMsg := "no matches for " + strconv.Quote(want) + " under ."; got != wantMsg {
			t.Errorf("pattern %s: %q, want %q", lit, got, wantMsg)
		}
	}
	rs.close()
}

// requestSamples are request lines for FuzzCoreRequest: the common shapes
// and the corners of the decoder.
var requestSamples = []string{
	`{"tool":"read_file","arguments":{"path":"a.txt"},"call_id":"c1"}`,
	` { "tool" : "read_file" , "arguments" : { "path" : "dir/a b.txt" , "offset" : 2 , "limit" : 10 } , "call_id" : "c1" } `,
	`{"tool":"write_file","arguments":{"path":"x","content":"line\n\"q\"\\\/\b\f\r\t\u00e9\ud83d\ude00\ud800"}}`,
	`{"tool":"search","arguments":{"pattern":"a.b","regexp":true,"case_insensitive":false,"max_results":-3,"path":"."}}`,
	`{"tool":"list_dir","arguments":{"path":"","recursive":true},"call_id":null}`,
	`{"tool":"list_dir","arguments":[1,2.5e-3,{"a":[true,false,null]},"s"],"call_id":"c"}`,
	`{"tool":"edit","arguments":"{\"path\":\"a\",\"old_string\":\"x\",\"new_string\":null}"}`,
	`{"arguments":{"path":"a"},"tool":"read_file","tool":"write_file","other":{"x":[]}}`,
	`{"tool":"read_file","arguments":{"path":"a","offset":1.5,"limit":1e2,"bogus":-0}}`,
	`{"tool":"read_file","arguments":{"path":"a"}} x`,
	`{"tool":"read_file","arguments":{"path":"a",}}`,
	`{"tool":"read_file","arguments":{"path":"a"},"call_id":7}`,
	"{\"tool\":\"read_file\",\"arguments\":{\"path\":\"a\xff\x01\"}}",
	`{"tool":"read_file","arguments":01}`,
	`{}`, `[]`, `"x"`, `nul`, `{"tool":null}`,
}

// requestOK is what core accepts as a request, written with
// encoding/json: valid JSON, an object, whose "tool" and "call_id"
// members are strings or null.
func requestOK(line []byte) bool {
	if !json.Valid(line) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return false
		}
		if key == "tool" || key == "call_id" {
			if v[0] != '"' && string(v) != "null" {
				return false
			}
		}
	}
	return true
}

// FuzzCoreRequest sends any line to a reused instance (with no mount, so
// no call touches files): core accepts it (one answer line, a valid
// result) exactly when requestOK does, and refuses it otherwise with exit
// 2, a message on stderr and no answer. It never traps.
func FuzzCoreRequest(f *testing.F) {
	for _, s := range requestSamples {
		f.Add(s)
	}
	var rs *reused
	f.Fuzz(func(t *testing.T, in string) {
		line := []byte(strings.ReplaceAll(in, "\n", " "))
		if len(bytes.Trim(line, " \t\r")) == 0 {
			return // a blank line gets no answer
		}
		if rs == nil {
			rs = newReused(t, nil)
		}
		if _, err := rs.in.Write(append(line, '\n')); err != nil {
			t.Fatalf("writing %q: %v", line, err)
		}
		answer, err := rs.out.ReadString('\n')
		if err == nil {
			if !requestOK(line) {
				t.Fatalf("%q: core answered %q; encoding/json says it is not a request", line, answer)
			}
			var res callResult
			if err := json.Unmarshal([]byte(answer), &res); err != nil || len(res.Content) != 1 {
				t.Fatalf("%q: answer %q is not a result (%v)", line, answer, err)
			}
			return
		}
		o := rs.close()
		rs = nil
		if o.code != 2 || o.stdout != "" || !strings.HasPrefix(o.stderr, "core: the request on stdin is not a JSON object") {
			t.Fatalf("%q: instance ended with exit %d, stdout %q, stderr %q", line, o.code, o.stdout, o.stderr)
		}
		if requestOK(line) {
			t.Fatalf("%q: core refused it (%s); encoding/json reads it as a request", line, o.stderr)
		}
	})
}
