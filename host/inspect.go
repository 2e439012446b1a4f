package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/plugins"
)

// Inspect reports on one plugin without a config: src is the path of a
// .wasm file, or builtin:NAME for a plugin embedded in agenthost. It runs
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
	wasm, err := readPlugin(src)
	if err != nil {
		return nil, err
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
	info, err := plugin.Inspect(ctx, rt, wasm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
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
