package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// callRoots runs one call with several mounts and returns the result text
// and whether it is an error.
func callRoots(t *testing.T, roots []string, tool, args string) (string, bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run("call", tool, strings.NewReader(`{"arguments":`+args+`}`), &stdout, &stderr, roots...)
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("%s %s: exit %d, stdout %q, stderr %q", tool, args, code, stdout.String(), stderr.String())
	}
	return res.Content[0].Text, res.IsError
}

// TestMounts checks that core serves every mount it is granted, wherever it
// is: relative paths start at the first, absolute paths reach any, and a
// path under none is refused naming them all.
func TestMounts(t *testing.T) {
	base := t.TempDir()
	files, docs := filepath.Join(base, "files"), filepath.Join(base, "srv", "docs")
	writeTree(t, files, map[string]string{"a.txt": "in files\n"})
	writeTree(t, docs, map[string]string{"guide.md": "in docs\n"})
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots := []string{files, docs}

	if got, isErr := callRoots(t, roots, "read_file", `{"path":"a.txt"}`); isErr || !strings.Contains(got, "in files") {
		t.Errorf("relative path in the first mount: %q (error %v)", got, isErr)
	}
	guide := filepath.Join(docs, "guide.md")
	if got, isErr := callRoots(t, roots, "read_file", `{"path":"`+guide+`"}`); isErr || !strings.Contains(got, "in docs") {
		t.Errorf("absolute path in the second mount: %q (error %v)", got, isErr)
	}
	if got, isErr := callRoots(t, roots, "list_dir", `{"path":"`+docs+`"}`); isErr || !strings.Contains(got, guide) {
		t.Errorf("list_dir of the second mount = %q (error %v), want absolute paths the model can pass back", got, isErr)
	}
	if got, isErr := callRoots(t, roots, "write_file", `{"path":"`+filepath.Join(docs, "new.txt")+`","content":"x"}`); isErr {
		t.Errorf("write_file in the second mount: %q", got)
	}
	for _, p := range []string{filepath.Join(base, "secret.txt"), "../secret.txt", base} {
		got, isErr := callRoots(t, roots, "read_file", `{"path":"`+p+`"}`)
		if !isErr || !strings.Contains(got, "outside the mounted directories") || !strings.Contains(got, files+", "+docs) {
			t.Errorf("read_file %s = %q (error %v), want it refused naming both mounts", p, got, isErr)
		}
	}
}
