package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/ociref"
	"github.com/agenthost/agenthost/plugins"
)

// Inspect reports on one plugin without a config: src is the path of a
// .wasm file, builtin:NAME for a plugin embedded in agenthost, or a
// registry reference (oci://HOST/REPO:TAG or @sha256:DIGEST, fetched as a
// plugin block's source is, and reported with its manifest digest). It runs
// no tool: see plugin.Inspect for what it reports, and when it runs the
// module's describe mode (with nothing granted).
//
// The module is compiled on a runtime with the compilation cache of opts,
// as New uses it (opts.CacheDir, checked private; none when opts.NoCache),
// so a module that a run or an earlier Inspect compiled is not compiled
// again. The other options do not apply.
//
// It fails when src names no builtin or cannot be read, when the
// compilation cache is refused (see ResolveCacheDir), and for bytes that
// are not WebAssembly, a malformed WASI 0.2 component or a module that does
// not compile (the error names src and wraps plugin.ErrNotWasm where it
// applies).
func Inspect(ctx context.Context, src string, opts Options) (*plugin.Info, error) {
	var ref *ociref.Ref
	if ociref.IsOCI(src) {
		r, err := ociref.Parse(src)
		if err != nil {
			return nil, err
		}
		// Checked before anything is contacted; the command line has no
		// insecure: a plain HTTP registry off loopback is for a block.
		if err := r.CheckTransport(false); err != nil {
			return nil, err
		}
		ref = &r
	}
	var wasm []byte
	if ref == nil {
		w, err := readPlugin(src)
		if err != nil {
			return nil, err
		}
		wasm = w
	}
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	rt, err := plugin.NewRuntime(ctx, cache)
	if err != nil {
		return nil, err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	var fetched *plugin.Fetched
	if ref != nil {
		if wasm, fetched, err = rt.Fetch(ctx, src, *ref, false); err != nil {
			return nil, err
		}
	}
	info, err := plugin.Inspect(ctx, rt, wasm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	info.Registry = fetched
	return info, nil
}

// readPlugin reads a .wasm file, or an embedded plugin named builtin:NAME.
func readPlugin(src string) ([]byte, error) {
	if name, ok := strings.CutPrefix(src, "builtin:"); ok {
		wasm, found := plugins.Builtin(name)
		if !found {
			return nil, fmt.Errorf("no builtin plugin %q; builtins: %s", name, strings.Join(plugins.BuiltinNames(), ", "))
		}
		return wasm, nil
	}
	wasm, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", src)
	}
	return wasm, err
}
