// Command bench measures agenthost's per-step host cost end to end: it
// builds the agenthost binary and the example echo plugin, serves a fast
// scripted model with internal/fakemodel (one tool call per step), runs
// `agenthost run` for 1 step and for -steps steps, and reports per step
//
//	(wall(steps) − wall(2)) / (steps − 2)
//
// and the same for CPU time (user + system, from rusage), with the peak RSS
// of the long run and the cached start-up of a run with three plugins,
// beside a plain Go program making the same request (bench/plainloop).
// With Node and bench/aisdk/node_modules present it runs the same loop with
// the Vercel AI SDK against the same kind of server, so the ratio is one
// command:
//
//	go run ./bench                  # from the repository root
//	go run ./bench -runs 9 -kinds core
//	(cd bench/aisdk && npm ci) && go run ./bench -aisdk
//
// See bench/README.md for what each figure means and how noisy it is.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agenthost/agenthost/internal/fakemodel"
	"github.com/agenthost/agenthost/internal/scenario"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var (
	steps     = flag.Int("steps", 200, "steps of the long run (≤ 200, agenthost's max_steps ceiling)")
	runs      = flag.Int("runs", 5, "runs of each length; the median is reported")
	kinds     = flag.String("kinds", "core,echo,extism,extism_reuse", "plugin kinds to measure: core (builtin), echo (examples/echo, a Go-built agenthost/1 plugin), extism (count_vowels.wasm of the Extism Go SDK, fetched with go mod download), extism_reuse (the same with reuse = true)")
	aisdk     = flag.Bool("aisdk", true, "also run the loop with the Vercel AI SDK (needs node and bench/aisdk/node_modules; skipped with a message otherwise)")
	bin       = flag.String("bin", "", "agenthost binary to measure (default: build ./cmd/agenthost)")
	echoF     = flag.String("echo", "", "echo plugin to use (default: build examples/echo)")
	evts      = flag.String("events", "", "write the --events output of one long run of each kind to `prefix`KIND.jsonl")
	conc      = flag.Bool("concurrent", true, "also run 50 concurrent 20-step runs in one process (go test ./host -bench ConcurrentRuns) and report runs/s and the step p50/p99; always this source tree, whatever -bin says")
	keep      = flag.Bool("keep", false, "keep the work directory and print its path")
	prof      = flag.String("cpuprofile", "", "write a CPU profile of one more long run of each kind to `prefix`KIND.pprof (AGENTHOST_CPUPROFILE)")
	pageCache = flag.String("pagecache", "drop", "the measured binary's page cache before the runs: drop (written back and dropped, so the runs fault it in as exec does from a cold cache) or keep (as it is: a binary just written by the linker, cp or install sits in large folios, and each fault then maps a whole folio: more RSS for the same work)")
	smaps     = flag.Bool("smaps", false, "run one more long run of each kind and print its largest mappings at its peak resident set (Linux)")
)

func run() error {
	flag.Parse()
	if *steps < 3 || *steps > 200 {
		return fmt.Errorf("-steps must be between 3 and 200, not %d", *steps)
	}
	if _, err := os.Stat("examples/echo/main.go"); err != nil {
		return errors.New("run from the repository root: go run ./bench")
	}
	work, err := os.MkdirTemp("", "agenthost-bench-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}
	agenthost := *bin
	if agenthost == "" {
		agenthost = filepath.Join(work, "agenthost")
		// Static, as the README installs it: the default cgo build maps
		// libc and its loader too, which adds to the resident set.
		if err := goBuild(".", agenthost, "./cmd/agenthost", []string{"CGO_ENABLED=0"}); err != nil {
			return err
		}
	}
	echo := *echoF
	if echo == "" {
		echo = filepath.Join(work, "echo.wasm")
		if err := goBuild("examples/echo", echo, ".", []string{"GOOS=wasip1", "GOARCH=wasm"}); err != nil {
			return err
		}
	} else if echo, err = filepath.Abs(echo); err != nil {
		return err
	}
	cache := filepath.Join(work, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		return err
	}
	b := &bench{bin: agenthost, work: work, cache: cache, echo: echo}
	switch *pageCache {
	case "keep":
	case "drop":
		if err := dropPageCache(agenthost); err != nil {
			return fmt.Errorf("-pagecache=drop: %w", err)
		}
	default:
		return fmt.Errorf("-pagecache must be drop or keep, not %q", *pageCache)
	}

	fmt.Printf("agenthost per-step host cost: %d-step runs against a fake model answering at once, one tool call per step; median of %d runs\n", *steps, *runs)
	fmt.Printf("%-24s %10s %10s %9s %9s %9s\n", "loop", "wall/step", "CPU/step", "peak RSS", "wall(2)", "spread")
	for _, k := range strings.Split(*kinds, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		res, err := b.measure(k)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		res.print("agenthost/" + k)
	}
	st, plain, err := b.startup()
	if err != nil {
		return fmt.Errorf("start-up: %w", err)
	}
	fmt.Printf("cached start-up of run with three plugins (core, echo, and echo's bytes again as a wasi_cli plugin; one text step): median %.1f ms wall, %.1f ms CPU, peak RSS %.1f MB\n",
		ms(st.wall), ms(st.cpu), mb(st.rss))
	fmt.Printf("plain Go program (bench/plainloop: one streamed request with go-openai, interleaved with the above): median %.1f ms wall, %.1f ms CPU, peak RSS %.1f MB; start-up is %.1f× its wall\n",
		ms(plain.wall), ms(plain.cpu), mb(plain.rss), ms(st.wall)/ms(plain.wall))
	if *conc {
		if err := concurrent(); err != nil {
			return fmt.Errorf("concurrent runs: %w", err)
		}
	}
	if *aisdk {
		res, err := b.aisdk()
		switch {
		case errors.Is(err, errSkip):
			fmt.Println("ai-sdk: skipped:", err)
		case err != nil:
			return fmt.Errorf("ai-sdk: %w", err)
		default:
			res.print("ai-sdk (node)")
		}
	}
	return nil
}

var errSkip = errors.New("skip")

type bench struct {
	bin, work, cache, echo string
}

// sample is one process run.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // bytes
}

type result struct {
	short, long []sample
	steps       int
}

func (r result) print(name string) {
	n := float64(r.steps - 2)
	ws, cs := make([]float64, len(r.long)), make([]float64, len(r.long))
	for i := range r.long {
		ws[i] = ms(r.long[i].wall-r.short[i].wall) / n
		cs[i] = ms(r.long[i].cpu-r.short[i].cpu) / n
	}
	var rss []float64
	var w1 []float64
	for i := range r.long {
		rss = append(rss, mb(r.long[i].rss))
		w1 = append(w1, ms(r.short[i].wall))
	}
	lo, hi := minmax(ws)
	fmt.Printf("%-24s %7.3f ms %7.3f ms %6.1f MB %6.1f ms %4.2f–%.2f\n", name, median(ws), median(cs), median(rss), median(w1), lo, hi)
}

// measure runs the loop with one plugin kind: runs × (1 step, steps steps),
// interleaved so drift in the machine's load hits both lengths alike.
func (b *bench) measure(kind string) (result, error) {
	dir := filepath.Join(b.work, kind)
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		return result{}, err
	}
	var lines strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "ws", "a.txt"), []byte(lines.String()), 0o644); err != nil {
		return result{}, err
	}
	var plugins, tools string
	var call func(i int) fakemodel.ToolCall
	switch kind {
	case "core":
		plugins = coreBlock
		tools = `"read_file"`
		call = func(i int) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "read_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"a.txt","offset":%d,"limit":1}`, i))}
		}
	case "echo":
		plugins = echoBlock("echo", b.echo)
		tools = `"echo"`
		call = func(i int) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "echo", Arguments: json.RawMessage(fmt.Sprintf(`{"text":"step %d"}`, i))}
		}
	case "extism", "extism_reuse":
		wasm, err := scenario.ExtismTestPlugin("count_vowels.wasm")
		if err != nil {
			return result{}, err
		}
		reuse := ""
		if kind == "extism_reuse" {
			reuse = "\n  reuse  = true"
		}
		plugins = fmt.Sprintf(`
plugin "vowels" {
  source = %q
  kind   = "extism"%s
  tool "count_vowels" {
    description  = "Count the vowels in a text."
    input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
    function     = "count_vowels"
    input        = args.text
  }
}
`, wasm, reuse)
		tools = `"count_vowels"`
		call = func(i int) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "count_vowels", Arguments: json.RawMessage(fmt.Sprintf(`{"text":"step %d"}`, i))}
		}
	default:
		return result{}, fmt.Errorf("unknown kind %q (want core, echo, extism or extism_reuse)", kind)
	}
	cfg := filepath.Join(dir, "agents.hcl")
	if err := os.WriteFile(cfg, []byte(config(plugins, tools)), 0o644); err != nil {
		return result{}, err
	}
	script := func(n int) []fakemodel.Reply {
		var rs []fakemodel.Reply
		for i := 1; i < n; i++ {
			rs = append(rs, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call(i)}})
		}
		return append(rs, fakemodel.Reply{Text: "done"})
	}
	// One run to fill the compilation cache.
	if _, err := b.agenthost(dir, cfg, script(2)); err != nil {
		return result{}, err
	}
	if *evts != "" {
		if _, err := b.agenthost(dir, cfg, script(*steps), "--events", "-o", *evts+kind+".jsonl"); err != nil {
			return result{}, err
		}
	}
	if *prof != "" {
		if _, err := b.agenthost(dir, cfg, script(*steps), "env", "AGENTHOST_CPUPROFILE="+*prof+kind+".pprof"); err != nil {
			return result{}, err
		}
	}
	if *smaps {
		if err := b.peakMappings(dir, cfg, script(*steps)); err != nil {
			return result{}, err
		}
	}
	res := result{steps: *steps}
	for range *runs {
		// The short run makes one tool call too: the fixed costs of a
		// run that calls a tool (its module's compilation, which a
		// text-only run skips) are then in both.
		s, err := b.agenthost(dir, cfg, script(2))
		if err != nil {
			return result{}, err
		}
		l, err := b.agenthost(dir, cfg, script(*steps))
		if err != nil {
			return result{}, err
		}
		res.short, res.long = append(res.short, s), append(res.long, l)
	}
	return res, nil
}

// startup measures a one-step run (a text answer) with three plugins
// loaded from a warm compilation cache, and, interleaved with it, the plain
// Go program bench/plainloop making the same request: medians of each.
func (b *bench) startup() (st, plain sample, err error) {
	dir := filepath.Join(b.work, "startup")
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		return sample{}, sample{}, err
	}
	echo2 := filepath.Join(dir, "echo2.wasm")
	data, err := os.ReadFile(b.echo)
	if err != nil {
		return sample{}, sample{}, err
	}
	if err := os.WriteFile(echo2, data, 0o644); err != nil {
		return sample{}, sample{}, err
	}
	cfg := filepath.Join(dir, "agents.hcl")
	plugins := coreBlock + echoBlock("echo", b.echo) + fmt.Sprintf(`
plugin "cli" {
  source = %q
  kind   = "wasi_cli"
  tool "say" {
    description  = "Echo as a WASI command."
    input_schema = { type = "object" }
    argv         = ["echo"]
  }
}
`, echo2)
	if err := os.WriteFile(cfg, []byte(config(plugins, `"read_file", "echo"`)), 0o644); err != nil {
		return sample{}, sample{}, err
	}
	plainBin := filepath.Join(b.work, "plainloop")
	if err := goBuild(".", plainBin, "./bench/plainloop", []string{"CGO_ENABLED=0"}); err != nil {
		return sample{}, sample{}, err
	}
	text := []fakemodel.Reply{{Text: "done"}}
	plainRun := func() (sample, error) {
		srv, err := fakemodel.Start(text)
		if err != nil {
			return sample{}, err
		}
		defer srv.Close()
		cmd := exec.Command(plainBin)
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL())
		return measured(cmd, srv, text)
	}
	if _, err := b.agenthost(dir, cfg, text); err != nil {
		return sample{}, sample{}, err
	}
	if _, err := plainRun(); err != nil {
		return sample{}, sample{}, fmt.Errorf("bench/plainloop: %w", err)
	}
	var all, plains []sample
	for range *runs {
		s, err := b.agenthost(dir, cfg, text)
		if err != nil {
			return sample{}, sample{}, err
		}
		p, err := plainRun()
		if err != nil {
			return sample{}, sample{}, fmt.Errorf("bench/plainloop: %w", err)
		}
		all, plains = append(all, s), append(plains, p)
	}
	return medianSample(all), medianSample(plains), nil
}

// medianSample is the sample of median wall time.
func medianSample(all []sample) sample {
	sort.Slice(all, func(i, j int) bool { return all[i].wall < all[j].wall })
	return all[len(all)/2]
}

// agenthost runs one `agenthost run` against a fresh fake model serving
// replies and checks that it used every reply and answered "done". extra is
// "--events", "-o", FILE (write the run's --events to FILE) or "env", VAR=VALUE.
func (b *bench) agenthost(dir, cfg string, replies []fakemodel.Reply, extra ...string) (sample, error) {
	cmd, srv, err := b.command(dir, cfg, replies, extra...)
	if err != nil {
		return sample{}, err
	}
	defer srv.Close()
	if f, ok := cmd.Stdout.(*os.File); ok && f != nil {
		defer f.Close()
	}
	return measured(cmd, srv, replies)
}

// command prepares the `agenthost run` of agenthost and starts its fake model.
func (b *bench) command(dir, cfg string, replies []fakemodel.Reply, extra ...string) (*exec.Cmd, *fakemodel.Server, error) {
	args := []string{"run", "-c", cfg, "--log-level", "error"}
	env := append(os.Environ(), "AGENTHOST_CACHE_DIR="+b.cache)
	var out *os.File
	switch {
	case len(extra) == 3 && extra[0] == "--events":
		args = append(args, "--events")
		f, err := os.Create(extra[2])
		if err != nil {
			return nil, nil, err
		}
		out = f
	case len(extra) == 2 && extra[0] == "env":
		env = append(env, extra[1])
	}
	srv, err := fakemodel.Start(replies)
	if err != nil {
		if out != nil {
			out.Close()
		}
		return nil, nil, err
	}
	cmd := exec.Command(b.bin, append(args, "Read the lines, one per step.")...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Env = append(env, "OPENAI_BASE_URL="+srv.URL())
	return cmd, srv, nil
}

func measured(cmd *exec.Cmd, srv *fakemodel.Server, replies []fakemodel.Reply) (sample, error) {
	var out, errb bytes.Buffer
	var events *os.File
	if f, ok := cmd.Stdout.(*os.File); ok && f != nil {
		events = f
	}
	cmd.Stdout, cmd.Stderr = &out, &errb
	if events != nil {
		cmd.Stdout = io.MultiWriter(&out, events)
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	// A run that uses all 200 steps ends with exit code 3 ("stopped:
	// max_steps") even though its last step answered: the final step is the
	// one max_steps forces to be text. The script check below still holds.
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 && len(replies) == 200 {
		err = nil
	}
	if err != nil {
		return sample{}, fmt.Errorf("%s: %v\nstdout: %s\nstderr: %s", strings.Join(cmd.Args, " "), err, out.String(), errb.String())
	}
	if srv.Remaining() != 0 || srv.Exhausted() != 0 || !strings.Contains(out.String(), "done") {
		return sample{}, fmt.Errorf("%s: the run did not follow the script (%d of %d replies left, %d requests past its end)\nstdout: %s\nstderr: %s",
			strings.Join(cmd.Args, " "), srv.Remaining(), len(replies), srv.Exhausted(), out.String(), errb.String())
	}
	ps := cmd.ProcessState
	return sample{wall: wall, cpu: ps.UserTime() + ps.SystemTime(), rss: maxRSS(ps)}, nil
}

// concurrent runs BenchmarkConcurrentRuns of package host (50 runs of 20
// steps at once in one host, in process: a long-lived front end's shape)
// and prints its figures.
func concurrent() error {
	cmd := exec.Command("go", "test", "./host", "-run", "^$", "-bench", "^BenchmarkConcurrentRuns$", "-benchtime", fmt.Sprintf("%dx", *runs), "-count", "1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "BenchmarkConcurrentRuns") {
			continue
		}
		f := strings.Fields(line)
		vals := map[string]string{}
		for i := 2; i+1 < len(f); i += 2 {
			vals[f[i+1]] = f[i]
		}
		fmt.Printf("50 concurrent 20-step core runs in one process (%d rounds): %s runs/s, step p50 %s ms, p99 %s ms\n",
			*runs, vals["runs/s"], vals["ms/step-p50"], vals["ms/step-p99"])
		return nil
	}
	return fmt.Errorf("%s: no benchmark line in its output:\n%s", strings.Join(cmd.Args, " "), out)
}

// aisdk runs bench/aisdk/loop.mjs for 1 and for steps steps.
func (b *bench) aisdk() (result, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return result{}, fmt.Errorf("%w: node is not installed", errSkip)
	}
	if _, err := os.Stat("bench/aisdk/node_modules/ai"); err != nil {
		return result{}, fmt.Errorf("%w: bench/aisdk/node_modules is missing; run (cd bench/aisdk && npm ci)", errSkip)
	}
	script := func(n int) []fakemodel.Reply {
		var rs []fakemodel.Reply
		for i := 1; i < n; i++ {
			rs = append(rs, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "echo", Arguments: json.RawMessage(fmt.Sprintf(`{"text":"step %d"}`, i))}}})
		}
		return append(rs, fakemodel.Reply{Text: "done"})
	}
	one := func(n int) (sample, error) {
		replies := script(n)
		srv, err := fakemodel.Start(replies)
		if err != nil {
			return sample{}, err
		}
		defer srv.Close()
		cmd := exec.Command(node, "bench/aisdk/loop.mjs", srv.URL(), fmt.Sprint(n))
		return measured(cmd, srv, replies)
	}
	if _, err := one(2); err != nil {
		return result{}, err
	}
	res := result{steps: *steps}
	for range *runs {
		s, err := one(1)
		if err != nil {
			return result{}, err
		}
		l, err := one(*steps)
		if err != nil {
			return result{}, err
		}
		res.short, res.long = append(res.short, s), append(res.long, l)
	}
	return res, nil
}

func goBuild(dir, out, pkg string, env []string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, dir, err, msg)
	}
	return nil
}

const coreBlock = `
plugin "core" {
  source = "builtin:core"
  mount "workspace" {
    host  = "ws"
    guest = "/workspace"
    mode  = "rw"
  }
}
`

func echoBlock(name, wasm string) string {
	return fmt.Sprintf("\nplugin %q {\n  source = %q\n}\n", name, wasm)
}

func config(plugins, tools string) string {
	return `
host {
  max_steps = 200
  data_dir  = ".agenthost"
}

provider "fake" {
  base_url = env("OPENAI_BASE_URL")
}

model "m" {
  provider = "fake"
  name     = "fake-model"
}
` + plugins + `
agent "main" {
  model   = "m"
  steps   = 200
  tools   = [` + tools + `]
  doom_loop {
    threshold = 1000
    action    = "warn"
  }
}
`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / (1 << 20) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minmax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
