package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// readFileByLines is read_file's line selection as it was before it
// scanned for the lines shown: the whole file split with lines.
func readFileByLines(data []byte, show string, offset, limit int) (string, error) {
	ls := lines(data)
	if len(ls) == 0 {
		return show + " is empty", nil
	}
	start := max(offset, 1)
	if start > len(ls) {
		return "", fmt.Errorf("%s: offset %d is past the end of the file (%d lines)", show, start, len(ls))
	}
	if limit == 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	end := min(start-1+limit, len(ls))
	var b strings.Builder
	for n := start; n <= end; n++ {
		line := fmt.Sprintf("%6d\t%s\n", n, clip(ls[n-1], maxLineLen))
		if b.Len()+len(line) > maxOutput && n > start {
			end = n - 1
			break
		}
		b.WriteString(line)
	}
	if end < len(ls) {
		fmt.Fprintf(&b, "(showing lines %d-%d of %d; call read_file with offset %d to continue)\n", start, end, len(ls), end+1)
	}
	return b.String(), nil
}

// TestReadFileLines: read_file shows the same lines, numbers and notes as
// splitting the whole file would, for every offset and several limits, on
// files with and without a final newline, CRLF endings, empty lines, long
// lines and enough text to hit the output cap.
func TestReadFileLines(t *testing.T) {
	root := t.TempDir()
	w := newWorkspace([]string{root})
	long := strings.Repeat("é", maxLineLen)
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
	}
	for name, text := range files {
		path := filepath.Join(root, strings.ReplaceAll(name, " ", "_")+".txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(text, "\n") + 2
		for offset := 0; offset <= n; offset++ {
			for _, limit := range []int{0, 1, 2, 3, 150} {
				got, gerr := w.readFile(readFileArgs{Path: filepath.Base(path), Offset: offset, Limit: limit})
				want, werr := readFileByLines([]byte(text), filepath.Base(path), offset, limit)
				if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%s, offset %d, limit %d:\n got %q, %v\nwant %q, %v", name, offset, limit, got, gerr, want, werr)
				}
			}
		}
	}
}

// TestReadFileReusesBuffer: reading a small file again and again does not
// allocate the file each time (a reused instance's memory grew with every
// call's copy of it), and a file read after a bigger one, or a big one,
// still reads whole.
func TestReadFileReusesBuffer(t *testing.T) {
	root := t.TempDir()
	w := newWorkspace([]string{root})
	var sb strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	small := sb.String() // 2.7 KB
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() {
		if _, err := w.readFile(readFileArgs{Path: "a.txt", Offset: 150, Limit: 1}); err != nil {
			t.Fatal(err)
		}
	}
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 100
	for range calls {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per >= uint64(len(small)) {
		t.Errorf("read_file of a %d-byte file allocates %d bytes a call; want less than the file", len(small), per)
	}

	big := strings.Repeat("x", keepReadBuf) + "\nlast\n"
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, text string }{{"big.txt", big}, {"a.txt", small}, {"big.txt", big}} {
		data, _, err := w.readText(filepath.Join(root, f.path), f.path)
		if err != nil || string(data) != f.text {
			t.Fatalf("%s: read %d bytes (%v), want %d", f.path, len(data), err, len(f.text))
		}
	}
}
