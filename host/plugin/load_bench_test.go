package plugin

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkLoadCached loads a plugin whose load facts are cached, as the
// second start-up of a run does: the remembered sum of its file, its
// facts, its manifest or tool blocks, its tools' schemas. The compilation
// is left to the background and not waited for. One kind per case, so the
// kinds' load paths can be compared.
func BenchmarkLoadCached(b *testing.B) {
	cliTool := []CLITool{{
		Name: "shout", InputSchema: json.RawMessage(`{"type":"object"}`),
		Command: func(json.RawMessage) ([]string, []byte, error) { return []string{"cli"}, nil, nil },
	}}
	for _, c := range []struct {
		name string
		spec func() Spec
	}{
		{"agenthost", func() Spec { return spec(b, "echo", guests["echo"]) }},
		{"wasi_cli", func() Spec { s := spec(b, "cli", guests["cli"]); s.Tools = cliTool; return s }},
		{"extism", func() Spec {
			return extismSpec(b, "vowels", sdkWasm(b, "count_vowels.wasm"), inputTool("count_vowels", ""))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			cache := filepath.Join(b.TempDir(), "cache")
			s := c.spec()
			first, err := NewRuntime(ctx, cache)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := first.Load(ctx, s); err != nil {
				b.Fatal(err)
			}
			first.Close(ctx)
			r, err := NewRuntime(ctx, cache)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(ctx)
			for b.Loop() {
				if _, err := r.Load(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
