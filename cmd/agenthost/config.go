package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/buildinfo"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// configPath picks the config: -c, else $AGENTHOST_CONFIG, else
// agents.hcl here or in the nearest parent directory (config.Find).
func configPath(flagValue string, e *env) string {
	if flagValue != "" {
		return flagValue
	}
	return cmp.Or(e.getenv("AGENTHOST_CONFIG"), config.Find())
}

// hostOptions are the host options every command starts from: the
// compilation cache is $AGENTHOST_CACHE_DIR when set (one kept elsewhere,
// or shared by test scenarios that each have their own HOME), else the
// user's (host.DefaultCacheDir). The OTEL_* variables that turn traces on
// are read from e too. run adds its cassettes.
func hostOptions(e *env) host.Options {
	return host.Options{CacheDir: e.getenv("AGENTHOST_CACHE_DIR"), Getenv: e.getenv, Version: buildinfo.Version()}
}

// agentNames lists the config's agents, sorted, for an error message.
func agentNames(c *config.Config) string {
	var ns []string
	for _, a := range c.Agents {
		ns = append(ns, a.Name)
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}

// loadConfig loads and validates the config, printing every diagnostic.
// It returns a non-zero exit code when nothing may run.
func loadConfig(path string, e *env) (*config.Config, int) {
	cfg, files, diags, code := readConfig(path, e, false)
	if len(diags) > 0 {
		writeDiagnostics(e, files, diags)
	}
	return cfg, code
}

// readConfig loads the config without printing its diagnostics, but for
// a file that is not there. With errors, cfg is nil, or partial (see
// config.Options.Partial) when asked, and the code exitUsage.
func readConfig(path string, e *env, partial bool) (*config.Config, map[string]*hcl.File, hcl.Diagnostics, int) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "agenthost: config file %s not found: pass -c FILE, set AGENTHOST_CONFIG, or run 'agenthost init' to write a starter agents.hcl\n", path)
		return nil, nil, nil, exitUsage
	}
	cfg, files, diags := config.LoadFiles(path, config.Options{LookupEnv: e.lookupEnv, Partial: partial})
	if diags.HasErrors() {
		return cfg, files, diags, exitUsage
	}
	return cfg, files, diags, exitOK
}

// loadHost loads the config and builds the host (plugins loaded and
// compiled). Config problems found while loading plugins are printed as
// diagnostics too.
//
// A signal (ctx done) stops it at once with exitAborted, whatever stage
// the load is in: wazero does not stop a compilation midway (a big plugin
// compiles cold in a second or more), so the load goes on in a goroutine
// that the process's exit ends. The compilation cache is not damaged by
// that: wazero writes an entry to a temporary file and renames it into
// place only once complete.
func loadHost(ctx context.Context, path string, opts host.Options, e *env) (*host.Host, int) {
	return watchLoad(ctx, e, func(le *env) (*host.Host, int) { return loadHostNow(ctx, path, opts, le, false) })
}

// validateHost is loadHost for validate: a config whose errors all lie in
// provider, model or agent blocks still has its plugins and MCP servers
// loaded and the agents' tool names checked, so that an unknown tool is
// reported with those errors rather than after they are fixed.
func validateHost(ctx context.Context, path string, opts host.Options, e *env) (*host.Host, int) {
	return watchLoad(ctx, e, func(le *env) (*host.Host, int) { return loadHostNow(ctx, path, opts, le, true) })
}

// watchLoad runs load (loadHostNow) and returns what it returns, unless a
// signal comes first: see loadHost.
func watchLoad(ctx context.Context, e *env, load func(le *env) (*host.Host, int)) (*host.Host, int) {
	if ctx.Err() != nil {
		return nil, loadInterrupted(e)
	}
	type loaded struct {
		h      *host.Host
		code   int
		stderr bytes.Buffer // printed once the load is over, not after an abort
	}
	done := make(chan *loaded, 1)
	go func() {
		l := &loaded{}
		le := *e
		le.stderr = &l.stderr
		l.h, l.code = load(&le)
		done <- l
	}()
	select {
	case l := <-done:
		if ctx.Err() == nil {
			e.stderr.Write(l.stderr.Bytes())
			return l.h, l.code
		}
		// Interrupted as the load ended: its errors may be the signal's.
		if l.h != nil {
			l.h.Close(context.WithoutCancel(ctx))
		}
	case <-ctx.Done():
		go func() {
			if l := <-done; l.h != nil {
				l.h.Close(context.WithoutCancel(ctx))
			}
		}()
	}
	return nil, loadInterrupted(e)
}

func loadInterrupted(e *env) int {
	fmt.Fprintln(e.stderr, "agenthost: interrupted while loading the config and plugins; nothing ran")
	return exitAborted
}

// loadHostNow is loadHost without the watch for signals; partial is
// validateHost's.
func loadHostNow(ctx context.Context, path string, opts host.Options, e *env, partial bool) (*host.Host, int) {
	if partial {
		cfg, files, diags, code := readConfig(path, e, true)
		if !diags.HasErrors() {
			if len(diags) > 0 {
				writeDiagnostics(e, files, diags)
			}
			return hostOf(ctx, cfg, opts, e, code)
		}
		if cfg != nil {
			more, err := host.CheckTools(ctx, cfg, opts)
			diags = config.SortDiagnostics(append(diags, more...))
			if err != nil {
				defer fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
			}
		}
		writeDiagnostics(e, files, diags)
		return nil, exitUsage
	}
	cfg, code := loadConfig(path, e)
	return hostOf(ctx, cfg, opts, e, code)
}

// hostOf builds the host of a loaded config (code exitOK), printing its
// diagnostics.
func hostOf(ctx context.Context, cfg *config.Config, opts host.Options, e *env, code int) (*host.Host, int) {
	if code != exitOK {
		return nil, code
	}
	h, diags, err := host.New(ctx, cfg, opts)
	if len(diags) > 0 {
		writeDiagnostics(e, cfg.Files, diags)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return nil, exitUsage
	}
	if diags.HasErrors() {
		return nil, exitUsage
	}
	return h, exitOK
}
