// Package wasmbuild builds Go main packages into WebAssembly modules for
// WASI preview 1 (GOOS=wasip1 GOARCH=wasm), the way every test that needs a
// guest builds one: the sandbox tests, the embedded-plugin tests and the
// script command buildwasm. One place sets the environment, so a guest is
// built the same way wherever a test builds it.
package wasmbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build builds the Go main packages in dirs for wasip1. With one directory,
// out is the module file to write; with several, out is a directory and
// each module is written there under its directory's base name. The build
// is reproducible (-trimpath), without cgo, outside any go.work, and may
// resolve modules a guest's own go.mod needs (-mod=mod).
func Build(out string, dirs ...string) error {
	return BuildWith(nil, out, dirs...)
}

// BuildReactor is Build for WASI reactors (-buildmode=c-shared: a module
// exporting _initialize and no _start).
func BuildReactor(out string, dirs ...string) error {
	return BuildWith([]string{"-buildmode=c-shared"}, out, dirs...)
}

// BuildWith is Build with more go build flags (-tags, -buildmode).
func BuildWith(flags []string, out string, dirs ...string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("wasmbuild: no package to build")
	}
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", out)
	if len(dirs) > 1 {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		args[len(args)-1] = out + string(filepath.Separator)
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		args = append(args, abs)
	}
	cmd := exec.Command(GoTool(), args...)
	cmd.Dir = dirs[0]
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %v for wasip1: %v\n%s", dirs, err, b)
	}
	return nil
}

// GoTool is the go command: the one on PATH, else the one of the toolchain
// that built the running binary.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
