package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
)

// configDoc is the agents.hcl reference: its table of blocks, attributes
// and defaults is the one TestDefaultsDocumented checks.
const configDoc = "docs/configuration.md"

// TestDefaultsDocumented: the defaults docs/configuration.md's table and the
// other docs state are those of package internal/defaults.
func TestDefaultsDocumented(t *testing.T) {
	reference := readRepoFile(t, configDoc)
	rows := configTable(t, reference)
	cell := func(block, attr string) string {
		t.Helper()
		v, ok := rows[block+" "+attr]
		if !ok {
			t.Fatalf("%s: the configuration table has no row for %s %s", configDoc, block, attr)
		}
		return v
	}
	checks := []struct {
		where string
		got   []string // the default cell split at ", "
		want  []any    // int, string, time.Duration or size
	}{
		{"host max_steps", split(cell("host", "max_steps")), []any{defaults.MaxSteps}},
		{"host data_dir", split(cell("host", "data_dir")), []any{defaults.DataDir}},
		{"host max_depth", split(cell("host", "max_depth")), []any{defaults.MaxDepth}},
		{"host max_parallel_tools", split(cell("host", "max_parallel_tools")), []any{defaults.MaxParallelTools}},
		{"host max_calls_per_step", split(cell("host", "max_calls_per_step")), []any{defaults.MaxCallsPerStep}},
		{"provider retry", split(cell("provider", "retry { attempts initial max_delay }")),
			[]any{defaults.RetryAttempts, defaults.RetryInitial, defaults.RetryMaxDelay}},
		{"provider final_step_tools", split(cell("provider", "final_step_tools")), []any{defaults.FinalStepTools}},
		{"provider idle_timeout", split(cell("provider", "idle_timeout")), []any{defaults.IdleTimeout}},
		{"provider request_timeout", split(cell("provider", "request_timeout")), []any{defaults.RequestTimeout}},
		{"plugin limits", split(cell("plugin", "limits { memory timeout max_output }")),
			[]any{size(defaults.Memory), defaults.Timeout, size(defaults.MaxOutput)}},
		{"plugin quotas", split(cell("plugin", "limits { max_write max_files }")),
			[]any{size(defaults.MaxWrite), defaults.MaxFiles}},
		{"plugin mount mode", split(strings.TrimPrefix(cell("plugin", "mount \"NAME\" { host guest mode }"), "mode ")), []any{defaults.MountMode}},
		{"mcp_server max_output", split(cell("mcp_server", "max_output")), []any{size(defaults.MCPMaxOutput)}},
		{"agent doom_loop", split(cell("agent", "doom_loop { threshold action }")), []any{defaults.DoomThreshold, defaults.DoomAction}},
	}
	// Defaults stated in the prose and examples of docs/: the first
	// submatch of the pattern is the value.
	for _, d := range []struct {
		file, pattern string
		want          any
	}{
		{"docs/plugin-protocol.md", "(?m)^\\| `memory` \\| `([^`]+)`", size(defaults.Memory)},
		{"docs/plugin-protocol.md", "(?m)^\\| `timeout` \\| `([^` ]+)", defaults.Timeout},
		{"docs/plugin-protocol.md", "(?m)^\\| `max_output` \\| `([^`]+)`", size(defaults.MaxOutput)},
		{"docs/plugin-protocol.md", `memory += "[^"]*" +# default (\S+)`, size(defaults.Memory)},
		{"docs/plugin-protocol.md", `timeout += "[^"]*" +# per call; default (\S+)`, defaults.Timeout},
		{"docs/plugin-protocol.md", `max_output = "[^"]*" +# stdout and stderr each; default (\S+)`, size(defaults.MaxOutput)},
		{"docs/plugin-protocol.md", "`max_output` \\(([^)]+) by default\\)", size(defaults.MaxOutput)},
		{"docs/mcp.md", "(?m)^\\| `max_output` \\| `([^`]+)`", size(defaults.MCPMaxOutput)},
		{"docs/decisions.md", "`limits.max_write` \\(default ([^)]+)\\)", size(defaults.MaxWrite)},
		{"docs/decisions.md", "`limits.max_files` \\(default ([^)]+)\\)", defaults.MaxFiles},
		{"docs/decisions.md", "`request_timeout` \\(default ([^)]+)\\)", defaults.RequestTimeout},
	} {
		m := regexp.MustCompile(d.pattern).FindStringSubmatch(readRepoFile(t, d.file))
		if m == nil {
			t.Errorf("%s: nothing matches %s", d.file, d.pattern)
			continue
		}
		checks = append(checks, struct {
			where string
			got   []string
			want  []any
		}{d.file + " " + m[0], []string{strings.ReplaceAll(m[1], " ", "")}, []any{d.want}})
	}
	for _, c := range checks {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: documented %q, want %d values", c.where, c.got, len(c.want))
			continue
		}
		for i, want := range c.want {
			if err := sameValue(c.got[i], want); err != nil {
				t.Errorf("%s: documented %q: %v", c.where, c.got[i], err)
			}
		}
	}
	if want := fmt.Sprintf("`file(PATH)` reads a regular file of at most %d MiB", MaxFileSize>>20); !strings.Contains(reference, want) {
		t.Errorf("%s does not say %q", configDoc, want)
	}
}

// TestStarterWritesDefaults: every value the starter agents.hcl writes out
// for a setting that has a default is that default, so the starter shows
// them as they are.
func TestStarterWritesDefaults(t *testing.T) {
	tree := map[string]string{}
	for name, b := range Starter() {
		tree[name] = string(b)
	}
	dir := writeTree(t, tree)
	if err := os.Mkdir(filepath.Join(dir, StarterWorkspace), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(filepath.Join(dir, "agents.hcl"), Options{LookupEnv: noEnv})
	if diags.HasErrors() {
		t.Fatalf("starter diagnostics:%s", dump(diags))
	}
	if h := cfg.Host; h.MaxSteps != defaults.MaxSteps || h.MaxDepth != defaults.MaxDepth || h.DataDir != filepath.Join(dir, defaults.DataDir) ||
		h.MaxParallelTools != defaults.MaxParallelTools || h.MaxCallsPerStep != defaults.MaxCallsPerStep {
		t.Errorf("starter host block = %+v; want the defaults", h)
	}
	if r := cfg.Providers[0].Retry; r != (Retry{defaults.RetryAttempts, defaults.RetryInitial, defaults.RetryMaxDelay}) {
		t.Errorf("starter retry block = %+v; want the defaults", r)
	}
	want := Limits{Memory: defaults.Memory, Timeout: defaults.Timeout, MaxOutput: defaults.MaxOutput, MaxWrite: defaults.MaxWrite, MaxFiles: defaults.MaxFiles}
	if l := cfg.Plugin("core").Limits; l != want {
		t.Errorf("starter limits = %+v; want the defaults %+v", l, want)
	}
	if d := cfg.Agent("build").DoomLoop; d.Threshold != defaults.DoomThreshold || string(d.Action) != defaults.DoomAction {
		t.Errorf("starter doom_loop = %+v; want the defaults", d)
	}
}

type size uint64

// sameValue checks a documented default against the constant.
func sameValue(doc string, want any) error {
	unquoted := strings.Trim(doc, "`\"")
	switch w := want.(type) {
	case int:
		n, err := strconv.Atoi(unquoted)
		if err != nil || n != w {
			return fmt.Errorf("want %d", w)
		}
	case string:
		if unquoted != w {
			return fmt.Errorf("want %q", w)
		}
	case time.Duration:
		d, err := parseDuration(unquoted)
		if err != nil || d != w {
			return fmt.Errorf("want %s (%v)", w, err)
		}
	case size:
		n, err := parseSize(unquoted)
		if err != nil || n != uint64(w) {
			return fmt.Errorf("want %d bytes (%v)", w, err)
		}
	default:
		return fmt.Errorf("unexpected %T", want)
	}
	return nil
}

func split(cell string) []string { return strings.Split(cell, ", ") }

// configTable reads the configuration table of doc into "block attribute"
// → default cell, with the block's label dropped ("provider \"NAME\"" is
// "provider") and backquotes around attributes removed.
func configTable(t *testing.T, doc string) map[string]string {
	rows := map[string]string{}
	block := ""
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| block | attribute | default |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			continue
		}
		if b := strings.Trim(strings.TrimPrefix(cells[0], "|"), " `"); b != "" {
			block, _, _ = strings.Cut(b, " ")
		}
		rows[block+" "+strings.Trim(cells[1], "`")] = cells[2]
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no configuration table (| block | attribute | default | meaning |)", configDoc)
	}
	return rows
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
