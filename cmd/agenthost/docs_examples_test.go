package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
