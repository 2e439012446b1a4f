//go:build ignore

// gen builds the first-party plugins into .wasm files next to this file:
//
//	go generate ./plugins/...   (from the repository root)
//
// Each plugin is a Rust crate in plugins/NAME, built offline with Debian's
// toolchain and packaged crates (apt-get install cargo librust-regex-dev
// libstd-rust-dev-wasm32 lld-14; NAME/.cargo/config.toml points cargo at
// /usr/share/cargo/registry):
//
//	cargo build --release --offline --locked --target wasm32-wasi
//
// with RUSTC=/usr/bin/rustc, the stack size below, and the source and
// registry directories remapped so that no path of this machine gets into
// the module. gen then appends a custom section "agenthost.manifest"
// holding NAME/manifest.json (compacted), so the host reads the manifest
// without a describe run (and drops the export "main", which rustc adds
// beside _start). The output depends only on the sources and the
// toolchain (Debian's rustc 1.63 and crates), so two runs give
// byte-identical files; .ci/check-generate relies on that.
//
// CARGO and RUSTC name other binaries; the cargo build directory is kept
// under the user's cache directory between runs.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// builtins are the plugin directories under plugins/.
var builtins = []string{"core"}

// stackSize is the guest's stack in bytes (rustc's default is 1 MiB, most
// of it zero pages that every instance would start with). The stack sits
// below the data (wasm-ld's --stack-first, rustc's default), so an
// overflow traps instead of overwriting data.
const stackSize = 256 << 10

func main() {
	for _, name := range builtins {
		if err := build(name); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

// tool is the binary the environment variable env names, else Debian's
// /usr/bin/NAME when it exists (a rustup toolchain on $PATH may lack the
// WASI standard library), else NAME on $PATH.
func tool(env, name string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	if _, err := os.Stat("/usr/bin/" + name); err == nil {
		return "/usr/bin/" + name
	}
	return name
}

func build(name string) error {
	src, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	target := filepath.Join(cache, "agenthost", "cargo-target", name)

	cargo := tool("CARGO", "cargo")
	cmd := exec.Command(cargo, "build", "--release", "--offline", "--locked", "--target", "wasm32-wasi")
	cmd.Dir = name
	// The build sees none of the caller's cargo or rustc settings.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "CARGO") && !strings.HasPrefix(k, "RUST") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"RUSTC="+tool("RUSTC", "rustc"),
		"CARGO_TARGET_DIR="+target,
		"RUSTFLAGS="+strings.Join([]string{
			"--remap-path-prefix=" + src + "=/plugins/" + name,
			"--remap-path-prefix=/usr/share/cargo/registry=/cargo/registry",
			fmt.Sprintf("-Clink-arg=-zstack-size=%d", stackSize),
		}, " "),
	)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s build in plugins/%s: %w (Debian: apt-get install cargo librust-regex-dev libstd-rust-dev-wasm32 lld-14)", cargo, name, err)
	}
	wasm, err := os.ReadFile(filepath.Join(target, "wasm32-wasi", "release", name+".wasm"))
	if err != nil {
		return err
	}

	// rustc exports main from a WASI command too; agenthost's entry point
	// is _start alone.
	if wasm, err = dropExport(wasm, "main"); err != nil {
		return fmt.Errorf("%s.wasm: %w", name, err)
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

	tmp, err := os.CreateTemp(".", name+".*.wasm.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(wasm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name+".wasm")
}

// dropExport returns wasm without the export called name; the other
// sections are copied as they are.
func dropExport(wasm []byte, name string) ([]byte, error) {
	if len(wasm) < 8 {
		return nil, fmt.Errorf("not a wasm module")
	}
	out := append([]byte(nil), wasm[:8]...)
	p := wasm[8:]
	for len(p) > 0 {
		id := p[0]
		n, k := readULEB128(p[1:])
		if k == 0 || uint64(len(p)-1-k) < n {
			return nil, fmt.Errorf("section %d: bad size", id)
		}
		raw, body := p[:1+k+int(n)], p[1+k:1+k+int(n)]
		p = p[len(raw):]
		if id != 7 { // not the export section
			out = append(out, raw...)
			continue
		}
		count, k := readULEB128(body)
		if k == 0 {
			return nil, fmt.Errorf("export section: bad count")
		}
		rest := body[k:]
		var kept []byte
		var nkept uint64
		for range count {
			nl, k := readULEB128(rest)
			if k == 0 || uint64(len(rest)-k) <= nl { // the name and the kind byte
				return nil, fmt.Errorf("export section: bad name")
			}
			_, ik := readULEB128(rest[k+int(nl)+1:])
			if ik == 0 {
				return nil, fmt.Errorf("export section: bad index")
			}
			entry := rest[:k+int(nl)+1+ik]
			rest = rest[len(entry):]
			if string(entry[k:k+int(nl)]) != name {
				kept = append(kept, entry...)
				nkept++
			}
		}
		section := append(appendULEB128(nil, nkept), kept...)
		out = append(out, id)
		out = appendULEB128(out, uint64(len(section)))
		out = append(out, section...)
	}
	return out, nil
}

// readULEB128 decodes an unsigned LEB128 number: its value and length
// (0 when b does not hold one).
func readULEB128(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		if i == 10 {
			return 0, 0
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
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
