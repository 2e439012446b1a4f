package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/fakemodel"
)

// The benchmarks here run whole agent runs in process (host.Run: loop,
// provider, session files, the core plugin) against fakemodel servers that
// answer at once with one read_file call per step. `go run ./bench` does
// the same end to end with the binary; this one is for profiling
// (-cpuprofile, -memprofile).

const benchConfig = `provider "fake" {
  base_url = env("BENCH_BASE_URL")
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
plugin "core" {
  source = "builtin:core"
  mount "w" {
    host  = "ws"
    guest = "/workspace"
    mode  = "rw"
  }
}
agent "main" {
  prompt  = "You are a benchmark agent."
  default = true
  steps   = 200
  tools   = ["read_file"]
  doom_loop {
    threshold = 1000
  }
}
`

// benchProject writes benchConfig into a temp dir and returns its path.
func benchProject(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	var lines strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	for name, data := range map[string]string{"agents.hcl": benchConfig, "ws/a.txt": lines.String()} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "agents.hcl")
}

// benchScript is steps-1 read_file calls, then a text answer.
func benchScript(steps int) []fakemodel.Reply {
	var rs []fakemodel.Reply
	for i := 1; i < steps; i++ {
		rs = append(rs, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"a.txt","offset":%d,"limit":1}`, i))}}})
	}
	return append(rs, fakemodel.Reply{Text: "done"})
}

// BenchmarkRunSteps times host.Run of a 200-step run (199 read_file calls
// of the core plugin, then text); building the host (from a warm on-disk
// compilation cache) and the fake server is not timed. It reports ns/step.
func BenchmarkRunSteps(b *testing.B) {
	const steps = 200
	path := benchProject(b)
	cache := b.TempDir()
	ctx := context.Background()
	var stepTotal time.Duration
	for b.Loop() {
		b.StopTimer()
		srv, err := fakemodel.Start(benchScript(steps))
		if err != nil {
			b.Fatal(err)
		}
		b.Setenv("BENCH_BASE_URL", srv.URL())
		cfg, diags := config.Load(path, config.Options{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		h, diags, err := New(ctx, cfg, Options{CacheDir: cache})
		if err != nil || diags.HasErrors() {
			b.Fatal(err, diags)
		}
		b.StartTimer()
		start := time.Now()
		res, err := h.Run(ctx, RunRequest{Prompt: "Read the lines, one per step."})
		stepTotal += time.Since(start)
		b.StopTimer()
		if err != nil || res.Steps != steps || srv.Remaining() != 0 {
			b.Fatalf("run: %v, %+v, %d replies left", err, res, srv.Remaining())
		}
		h.Close(ctx)
		srv.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(stepTotal.Nanoseconds())/float64(b.N*steps), "ns/step")
}

// BenchmarkNew times building the host of benchConfig (loading the core
// plugin from a warm on-disk compilation cache), the start-up of `run`
// before its first request.
func BenchmarkNew(b *testing.B) {
	path := benchProject(b)
	cache := b.TempDir()
	ctx := context.Background()
	b.Setenv("BENCH_BASE_URL", "http://127.0.0.1:1/v1")
	load := func() {
		cfg, diags := config.Load(path, config.Options{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		h, diags, err := New(ctx, cfg, Options{CacheDir: cache})
		if err != nil || diags.HasErrors() {
			b.Fatal(err, diags)
		}
		h.Close(ctx)
	}
	load() // fill the cache
	for b.Loop() {
		load()
	}
}
