package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host"
)

// exampleBlock is a code block of docs/plugin-protocol.md that shows a file
// of the repository: an HTML comment naming the file, then the fence.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```[a-z]*\n(.*?)```\n")

// TestProtocolExamplesAreTheFiles keeps the examples of
// docs/plugin-protocol.md identical to the files the script tests build
// (testdata/script/example_*.txtar), so the docs show tested code.
func TestProtocolExamplesAreTheFiles(t *testing.T) {
	doc, err := os.ReadFile("../../docs/plugin-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := exampleBlock.FindAllStringSubmatch(string(doc), -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		name, text := b[1], b[2]
		seen[name] = true
		want, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("docs/plugin-protocol.md shows %s: %v", name, err)
			continue
		}
		if text != string(want) {
			t.Errorf("docs/plugin-protocol.md: the block for %s differs from the file; copy the file into the doc", name)
		}
	}
	for _, name := range []string{"examples/c/greeting.c", "examples/rust/src/main.rs", "examples/assemblyscript/assembly/index.ts", "examples/zig/main.zig", "examples/go/main.go", "examples/assemblyscript/asconfig.json"} {
		if !seen[name] {
			t.Errorf("docs/plugin-protocol.md does not show %s (<!-- example: %s --> before its code block)", name, name)
		}
	}
	if len(blocks) == 0 || !strings.Contains(string(doc), "<!-- example:") {
		t.Error("no example blocks found")
	}
}

// fence is a fenced code block of a markdown file: its language and text.
var fence = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```\n")

// readmeBlocks returns the text of README.md's code blocks in language lang.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == lang {
			blocks = append(blocks, m[2])
		}
	}
	return blocks
}

// shellLines joins the lines of a shell block continued with a backslash
// and drops comments and blank lines.
func shellLines(block string) []string {
	var lines []string
	cur := ""
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if rest, ok := strings.CutSuffix(l, "\\"); ok {
			cur += strings.TrimSpace(rest) + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	return lines
}

// TestReadmeCommands keeps README.md's two commands the ones the tests run:
// the first block holds exactly an agenthost run through 'go run' and
// 'go test ./...', and the run is the one testdata/script/quickstart_replay.txtar
// runs and checks (paths under $REPO, the prompt in single quotes).
func TestReadmeCommands(t *testing.T) {
	blocks := readmeBlocks(t, "sh")
	if len(blocks) == 0 {
		t.Fatal("README.md has no sh block")
	}
	lines := shellLines(blocks[0])
	if len(lines) != 2 || lines[1] != "go test ./..." {
		t.Fatalf("README.md's first sh block = %q; want two commands, a 'go run ./cmd/agenthost run ...' and 'go test ./...'", lines)
	}
	args, ok := strings.CutPrefix(lines[0], "go run ./cmd/agenthost ")
	if !ok {
		t.Fatalf("README.md's first command %q does not start with 'go run ./cmd/agenthost '", lines[0])
	}
	// The script's form of the same command line.
	prompt := regexp.MustCompile(`"([^"]*)"`)
	script := prompt.ReplaceAllString(args, "'$1'")
	script = regexp.MustCompile(`(^| )(examples/)`).ReplaceAllString(script, "$1$$REPO/$2")
	want := "status 0 agenthost " + script + "\n"
	txtar, err := os.ReadFile("../../testdata/script/quickstart_replay.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txtar), want) {
		t.Errorf("testdata/script/quickstart_replay.txtar does not run README.md's first command; want the line\n%s", want)
	}
	for _, f := range []string{"examples/quickstart/agents.hcl", "examples/quickstart/cassette.jsonl"} {
		if !strings.Contains(args, f) {
			t.Errorf("README.md's first command %q does not use %s", args, f)
		}
	}
}

// TestReadmeExample: the agents.hcl README.md shows validates, plugins and
// tool names included, with the limits the text around it describes.
func TestReadmeExample(t *testing.T) {
	blocks := readmeBlocks(t, "hcl")
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d hcl blocks; want the one example", len(blocks))
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agents.hcl")
	if err := os.WriteFile(cfg, []byte(blocks[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		lookupEnv: func(string) (string, bool) { return "", false },
	}
	cache, err := host.ResolveCacheDir(os.Getenv("AGENTHOST_CACHE_DIR"))
	if err != nil {
		cache = t.TempDir()
	}
	e.getenv = func(k string) string {
		if k == "AGENTHOST_CACHE_DIR" {
			return cache
		}
		return ""
	}
	if code := run(context.Background(), []string{"validate", "-c", cfg}, e); code != exitOK {
		t.Fatalf("validate README.md's example: exit %d\n%s", code, stderr.String())
	}
	if want := "agent notes: model default, steps 10, budget 20, tools: list_dir, read_file, search, write_file, edit"; !strings.Contains(stdout.String(), want) {
		t.Errorf("validate output lacks %q:\n%s", want, stdout.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("validate README.md's example warned:\n%s", stderr.String())
	}
}
