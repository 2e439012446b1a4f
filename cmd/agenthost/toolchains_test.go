package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/internal/scenario"
)

// Toolchains for the script tests that build the plugin examples of
// docs/plugin-protocol.md (testdata/script/example_*.txtar). A script
// starts with [!toolchain:NAME] skip ...: each condition is true when the
// toolchain is present and can build a WASI module, probed once per
// process by building an empty program.
//
//	toolchain:c     clang with a wasm32-wasi sysroot (Debian: clang lld wasi-libc
//	                libclang-rt-14-dev-wasm32; or wasi-sdk's clang on $PATH)
//	toolchain:rust  rustc with the wasm32-wasip1 standard library, or one with the
//	                older wasm32-wasi (Debian: rustc libstd-rust-dev-wasm32);
//	                the script builds with "rustwasm SRC OUT"
//	toolchain:asc   $AGENTHOST_AS_DIR/node_modules holding assemblyscript and
//	                @assemblyscript/wasi-shim, and node on $PATH
//	toolchain:zig   zig on $PATH
//	toolchain:componentize  ComponentizeJS from npm (cached; needs node and npm);
//	                the script builds with "component js NAME OUT"
var toolchains = map[string]func(dir string) error{
	"c": func(dir string) error {
		src := filepath.Join(dir, "t.c")
		if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			return err
		}
		return runTool(dir, "clang", "--target=wasm32-wasi", "-O2", "-o", filepath.Join(dir, "t.wasm"), src)
	},
	"rust": func(dir string) error {
		src := filepath.Join(dir, "t.rs")
		if err := os.WriteFile(src, []byte("fn main() {}\n"), 0o644); err != nil {
			return err
		}
		var errs []string
		for _, c := range rustCandidates {
			err := runTool(dir, c[0], "--target", c[1], "-o", filepath.Join(dir, "t.wasm"), src)
			if err == nil {
				rustc = c
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	},
	"asc": func(dir string) error {
		as := os.Getenv("AGENTHOST_AS_DIR")
		if as == "" {
			return fmt.Errorf("AGENTHOST_AS_DIR is not set")
		}
		for _, p := range []string{"node_modules/.bin/asc", "node_modules/@assemblyscript/wasi-shim/asconfig.json"} {
			if _, err := os.Stat(filepath.Join(as, p)); err != nil {
				return err
			}
		}
		_, err := exec.LookPath("node")
		return err
	},
	"zig": func(dir string) error { return runTool(dir, "zig", "version") },
}

var probes sync.Map // name -> func() bool

// toolchainCondition answers [toolchain:NAME] and hands every other
// condition to the scenario runner's own (extism, extismpdk).
func toolchainCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "toolchain:")
	if !ok {
		return scenario.Condition(cond) // the conditions agenthost test knows
	}
	probe, ok := toolchains[name]
	if !ok {
		return false, fmt.Errorf("unknown toolchain %q in [%s]", name, cond)
	}
	f, _ := probes.LoadOrStore(name, sync.OnceValue(func() bool {
		dir, err := os.MkdirTemp("", "agenthost-toolchain-")
		if err != nil {
			return false
		}
		defer os.RemoveAll(dir)
		return probe(dir) == nil
	}))
	return f.(func() bool)(), nil
}

func runTool(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, b)
	}
	return nil
}

// rustCandidates are the rustc commands and targets tried, newest first;
// rustc is the first that works (set by the probe).
var (
	rustCandidates = [][2]string{{"rustc", "wasm32-wasip1"}, {"rustc", "wasm32-wasi"}, {"/usr/bin/rustc", "wasm32-wasi"}}
	rustc          [2]string
)

// cmdRustWasm builds a Rust file to a WASI module with the rustc the
// toolchain:rust probe found:
//
//	rustwasm SRC OUT.wasm
func cmdRustWasm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rustwasm SRC OUT.wasm")
	}
	if ok, _ := toolchainCondition("toolchain:rust"); !ok {
		ts.Fatalf("rustwasm: no rustc for WASI (guard the script with [!toolchain:rust] skip)")
	}
	ts.Logf("%s --target %s", rustc[0], rustc[1])
	ts.Check(ts.Exec(rustc[0], "--target", rustc[1], "-O", "-o", ts.MkAbs(args[1]), ts.MkAbs(args[0])))
}
