//go:build ignore

// gen builds the first-party plugins into .wasm files next to this file:
//
//	go generate ./plugins/...   (from the repository root)
//
// For each plugin it runs, in plugins/NAME,
//
//	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS= GOWORK=off \
//	  go build -trimpath -buildvcs=false -ldflags=-s -o NAME.wasm .
//
// and appends a custom section "agenthost.manifest" holding NAME/manifest.json
// (compacted), so the host reads the manifest without a describe run. The
// output depends only on the sources and the Go toolchain version, so two
// runs with the same toolchain give byte-identical files; .ci/check-generate
// relies on that.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// builtins are the plugin directories under plugins/.
var builtins = []string{"core"}

func main() {
	for _, name := range builtins {
		if err := build(name); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func build(name string) error {
	tmp, err := os.CreateTemp(".", name+".*.wasm.tmp")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())

	out, err := filepath.Abs(tmp.Name())
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s", "-o", out, ".")
	cmd.Dir = name
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build in plugins/%s: %w", name, err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return err
	}

	manifest, err := os.ReadFile(filepath.Join(name, "manifest.json"))
	if err != nil {
		return err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, manifest); err != nil {
		return fmt.Errorf("plugins/%s/manifest.json: %w", name, err)
	}
	wasm = appendCustomSection(wasm, "agenthost.manifest", compact.Bytes())

	if err := os.WriteFile(out, wasm, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(out, 0o644); err != nil { // go build made it executable
		return err
	}
	return os.Rename(out, name+".wasm")
}

// appendCustomSection appends a custom section (id 0) to a wasm module:
// id, LEB128 size of the rest, LEB128 name length, name, payload.
func appendCustomSection(wasm []byte, name string, payload []byte) []byte {
	body := appendULEB128(nil, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	wasm = append(wasm, 0)
	wasm = appendULEB128(wasm, uint64(len(body)))
	return append(wasm, body...)
}

func appendULEB128(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}
