package plugin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/loop"
)

// codeMapping is the mapping of this process that holds addr, as
// /proc/self/smaps shows it: its path ("" when anonymous), start, size
// and resident kilobytes. (The kernel merges neighbouring anonymous
// mappings, so wazero's may have started before addr.)
func codeMapping(t *testing.T, addr uintptr) (path string, start uintptr, size, rss int) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			if found {
				break
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil && uintptr(a) <= addr && addr < uintptr(b) {
				found, start = true, uintptr(a)
				if len(f) >= 6 {
					path = f[5]
				}
			}
			continue
		}
		if !found {
			continue
		}
		if k, ok := strings.CutPrefix(line, "Size:"); ok {
			size, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(k), " kB"))
		}
		if k, ok := strings.CutPrefix(line, "Rss:"); ok {
			rss, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(k), " kB"))
		}
	}
	if !found {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return path, start, size, rss
}

// loadCoreWithCode loads the builtin core plugin into a runtime whose
// agenthost files go to dir, with a workspace holding a.txt, and returns
// the plugin and its compiled module.
func loadCoreWithCode(t *testing.T, dir string) (*Plugin, []byte) {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t)
	r.cacheDir = dir
	p := load(t, r, Spec{Name: "core", Builtin: "core",
		Limits: Limits{Memory: defaults.Memory, Timeout: 10 * time.Second, MaxOutput: 1 << 20},
		Mounts: []Mount{{Name: "ws", Host: ws, Guest: "/workspace", Mode: MountRW}}})
	cm, err := p.mod.wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code := machineCode(cm)
	if code == nil {
		t.Fatal("machineCode found no machine code in the compiled core module (a wazero upgrade changed its types?)")
	}
	return p, code
}

// anonymousCore returns a copy of core's machine code as wazero leaves it,
// in an anonymous mapping (a runtime without a cache directory of its own).
func anonymousCore(t *testing.T) []byte {
	t.Helper()
	_, code := loadCoreWithCode(t, "")
	return bytes.Clone(code)
}

// sameCode fails the test unless the file at path holds want (the machine
// code) and then zeros to its mapping's size.
func sameCode(t *testing.T, path string, want []byte) {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	if len(file) != (len(want)+page-1)/page*page || !bytes.Equal(file[:len(want)], want) ||
		bytes.ContainsFunc(file[len(want):], func(r rune) bool { return r != 0 }) {
		t.Fatalf("the code file (%d bytes) is not the machine code (%d bytes)", len(file), len(want))
	}
}

// TestCodeFileBacked: core's machine code is mapped from a file of the
// cache, that file holds the code byte for byte, and the module runs.
// (How much of the code its calls make resident is logged, not checked:
// core's 1.6 MB of code are small enough for the kernel's fault-around
// to bring in whole.)
func TestCodeFileBacked(t *testing.T) {
	want := anonymousCore(t)
	dir := t.TempDir()
	p, code := loadCoreWithCode(t, dir)
	addr := uintptr(unsafe.Pointer(&code[0]))
	path, start, size, rss := codeMapping(t, addr)
	if start != addr {
		t.Fatalf("the code's mapping starts at %#x, not at the code (%#x)", start, addr)
	}
	if !strings.HasPrefix(path, filepath.Join(dir, codeDir)+string(os.PathSeparator)) {
		t.Fatalf("core's machine code is mapped from %q, want a file of %s", path, filepath.Join(dir, codeDir))
	}
	for i := range 20 {
		res, err := p.Call(context.Background(), loop.ToolCall{ID: fmt.Sprint(i), Name: "read_file", Arguments: `{"path":"a.txt"}`})
		if err != nil || res.IsError || !strings.Contains(res.Content, "three") {
			t.Fatalf("read_file through the mapped code: %+v, %v", res, err)
		}
	}
	_, _, _, after := codeMapping(t, addr)
	t.Logf("core's machine code: %d kB mapped, %d kB resident after the load, %d kB after 20 calls", size, rss, after)
	if page := os.Getpagesize(); size<<10 != (len(want)+page-1)/page*page {
		t.Errorf("mapping of %d kB for %d bytes of code", size, len(want))
	}
	sameCode(t, path, want)
}

// BenchmarkFileBackCode times mapping core's machine code from its file
// when the file is there already: the comparison and the mappings.
func BenchmarkFileBackCode(b *testing.B) {
	r := newRuntime(b)
	r.cacheDir = b.TempDir()
	wasm, bin := parsedCore(b)
	ctx := context.Background()
	cm, err := r.compilePatched(ctx, wasm, bin, 1<<14, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer cm.Close(ctx)
	for b.Loop() {
		if !r.fileBackCode(cm, "bench", 1<<14) {
			b.Fatal("not mapped")
		}
	}
}

// TestCodeFileChecked: a code file that is not what wazero compiled (a
// byte changed, cut short) or that others could write is replaced before
// it is mapped; in a directory others can write, or without a cache, the
// code stays in its anonymous mapping.
func TestCodeFileChecked(t *testing.T) {
	want := anonymousCore(t)
	codeFile := func(t *testing.T, dir string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dir, codeDir, "*."+codeFormat))
		if len(m) != 1 {
			t.Fatalf("code files in the cache: %v", m)
		}
		return m[0]
	}
	for name, spoil := range map[string]func(t *testing.T, path string){
		"altered": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, 1)
			f.ReadAt(b, 4096)
			b[0] ^= 0xff
			if _, err := f.WriteAt(b, 4096); err != nil {
				t.Fatal(err)
			}
		},
		"cut short": func(t *testing.T, path string) {
			if err := os.Truncate(path, 8192); err != nil {
				t.Fatal(err)
			}
		},
		"writable by others": func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o666); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			loadCoreWithCode(t, dir)
			spoil(t, codeFile(t, dir))
			_, code := loadCoreWithCode(t, dir)
			path, _, _, _ := codeMapping(t, uintptr(unsafe.Pointer(&code[0])))
			if path != codeFile(t, dir) {
				t.Fatalf("core's machine code is mapped from %q, want %q", path, codeFile(t, dir))
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("code file %v, %v: want mode 0600", st, err)
			}
			sameCode(t, path, want)
		})
	}
	for name, dir := range map[string]func(t *testing.T) string{
		"directory writable by others": func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, codeDir), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(dir, codeDir), 0o777); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		"no cache": func(t *testing.T) string { return "" },
	} {
		t.Run(name, func(t *testing.T) {
			d := dir(t)
			_, code := loadCoreWithCode(t, d)
			if path, _, _, _ := codeMapping(t, uintptr(unsafe.Pointer(&code[0]))); path != "" {
				t.Fatalf("core's machine code mapped from %q; want it left in wazero's anonymous mapping", path)
			}
			if d != "" {
				if m, _ := filepath.Glob(filepath.Join(d, codeDir, "*")); len(m) != 0 {
					t.Fatalf("files written to a directory others can write: %v", m)
				}
			}
		})
	}
}

// TestCodeFileSharedCode: a module compiled again in the same runtime
// shares its machine code with the first compile (wazero keeps one copy
// per module), which stays mapped from its file and is neither compared
// nor mapped again; the first compile's plugin goes on calling.
func TestCodeFileSharedCode(t *testing.T) {
	dir := t.TempDir()
	p, code := loadCoreWithCode(t, dir)
	call := func(i int) {
		t.Helper()
		res, err := p.Call(context.Background(), loop.ToolCall{ID: fmt.Sprint(i), Name: "read_file", Arguments: `{"path":"a.txt"}`})
		if err != nil || res.IsError || !strings.Contains(res.Content, "three") {
			t.Fatalf("read_file: %+v, %v", res, err)
		}
	}
	call(0)
	_, _, _, before := codeMapping(t, uintptr(unsafe.Pointer(&code[0])))
	wasm, bin := parsedCore(t)
	sum := sha256.Sum256(wasm)
	cm, err := p.r.compilePatched(context.Background(), wasm, bin, memoryPages(defaults.Memory), hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(context.Background())
	again := machineCode(cm)
	if again == nil || &again[0] != &code[0] {
		t.Fatalf("the second compile's code is not the first's (%p, %p)", again, code)
	}
	path, _, _, after := codeMapping(t, uintptr(unsafe.Pointer(&code[0])))
	if !strings.HasPrefix(path, filepath.Join(dir, codeDir)) {
		t.Fatalf("shared code mapped from %q", path)
	}
	// Mapped again, it would have started with nothing resident, after
	// a comparison that read all of it.
	if after < before {
		t.Fatalf("the shared code was mapped again (%d kB resident before the second compile, %d after)", before, after)
	}
	for i := 1; i <= 5; i++ {
		call(i)
	}
}
