package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/scenario"
	"github.com/agenthost/agenthost/internal/wasmbuild"
	"github.com/agenthost/agenthost/loop"
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

// benchKinds are the plugin kinds BenchmarkRunSteps measures: the
// builtin core plugin (read_file), examples/echo (a Go-built agenthost/1
// plugin with reuse) and the Extism Go SDK's count_vowels.wasm (no reuse).
// block returns the plugin block (building or fetching the module, or
// skipping), tool the name called and args the i-th call's arguments.
var benchKinds = []struct {
	name  string
	block func(b *testing.B) string
	tool  string
	args  func(i int) string
}{
	{"core", func(*testing.B) string { return "" }, "read_file", func(i int) string { return fmt.Sprintf(`{"path":"a.txt","offset":%d,"limit":1}`, i) }},
	{"echo", func(b *testing.B) string {
		out := filepath.Join(b.TempDir(), "echo.wasm")
		if err := wasmbuild.Build(out, filepath.Join("..", "examples", "echo")); err != nil {
			b.Skip(err)
		}
		return fmt.Sprintf("plugin \"echo\" {\n  source = %q\n}\n", out)
	}, "echo", func(i int) string { return fmt.Sprintf(`{"text":"step %d"}`, i) }},
	{"extism", func(b *testing.B) string {
		wasm, err := scenario.ExtismTestPlugin("count_vowels.wasm")
		if err != nil {
			b.Skip(err)
		}
		return fmt.Sprintf(`plugin "vowels" {
  source = %q
  kind   = "extism"
  tool "count_vowels" {
    description  = "Count the vowels in a text."
    input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
    function     = "count_vowels"
    input        = args.text
  }
}
`, wasm)
	}, "count_vowels", func(i int) string { return fmt.Sprintf(`{"text":"step %d"}`, i) }},
}

// BenchmarkRunSteps times host.Run of a 200-step run (199 tool calls, then
// text) with each plugin kind of benchKinds; building the host (from a warm
// on-disk compilation cache) and the fake server is not timed. It reports
// ns/step. With echo and extism the host's own share of a step is most of
// it; with core, the core guest's work is part of it.
func BenchmarkRunSteps(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind.name, func(b *testing.B) {
			const steps = 200
			path := benchProject(b)
			if block := kind.block(b); block != "" {
				data := strings.Replace(benchConfig, `tools   = ["read_file"]`, fmt.Sprintf(`tools   = [%q]`, kind.tool), 1) + block
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			var rs []fakemodel.Reply
			for i := 1; i < steps; i++ {
				rs = append(rs, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: kind.tool, Arguments: json.RawMessage(kind.args(i))}}})
			}
			rs = append(rs, fakemodel.Reply{Text: "done"})
			cache := b.TempDir()
			ctx := context.Background()
			var stepTotal time.Duration
			for b.Loop() {
				b.StopTimer()
				srv, err := fakemodel.Start(rs)
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
				res, err := h.Run(ctx, RunRequest{Prompt: "Call the tool, once per step."})
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
		})
	}
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

// BenchmarkConcurrentRuns runs 50 runs of 20 steps at once in one host
// (one runtime, one compiled core plugin), the shape of `mcp serve` or a
// workflow worker, against one fake server whose replies are all read_file
// calls (each run's 20th, final step drops its call and ends the run). It
// reports runs/s and the median and p99 wall time of a step (step.start to
// step.end: model request, parse, tool call, session writes).
func BenchmarkConcurrentRuns(b *testing.B) {
	const runs, steps = 50, 20
	path := benchProject(b)
	cache := b.TempDir()
	ctx := context.Background()
	var (
		mu     sync.Mutex
		stepNS []time.Duration
		total  time.Duration
		nruns  int
	)
	for b.Loop() {
		b.StopTimer()
		var replies []fakemodel.Reply
		for i := range runs * steps {
			replies = append(replies, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"a.txt","offset":%d,"limit":1}`, i%300+1))}}})
		}
		srv, err := fakemodel.Start(replies)
		if err != nil {
			b.Fatal(err)
		}
		b.Setenv("BENCH_BASE_URL", srv.URL())
		cfg, diags := config.Load(path, config.Options{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		cfg.Agents[0].Steps = new(int)
		*cfg.Agents[0].Steps = steps
		h, diags, err := New(ctx, cfg, Options{CacheDir: cache})
		if err != nil || diags.HasErrors() {
			b.Fatal(err, diags)
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var began time.Time
				sink := loop.SinkFunc(func(e loop.Event) {
					switch {
					case e.Depth != 0:
					case e.Type == loop.EventStepStart:
						began = e.Time
					case e.Type == loop.EventStepEnd:
						mu.Lock()
						stepNS = append(stepNS, e.Time.Sub(began))
						mu.Unlock()
					}
				})
				res, err := h.Run(ctx, RunRequest{Prompt: "Read the lines, one per step.", Sink: sink})
				if err != nil || res.Steps != steps {
					b.Errorf("run: %v, %+v", err, res)
				}
			}()
		}
		wg.Wait()
		total += time.Since(start)
		nruns += runs
		b.StopTimer()
		h.Close(ctx)
		srv.Close()
		b.StartTimer()
	}
	sort.Slice(stepNS, func(i, j int) bool { return stepNS[i] < stepNS[j] })
	b.ReportMetric(float64(nruns)/total.Seconds(), "runs/s")
	b.ReportMetric(float64(stepNS[len(stepNS)/2].Microseconds())/1000, "ms/step-p50")
	b.ReportMetric(float64(stepNS[len(stepNS)*99/100].Microseconds())/1000, "ms/step-p99")
}
