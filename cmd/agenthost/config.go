package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// configPath picks the config: -c, else $AGENTHOST_CONFIG, else ./agents.hcl.
func configPath(flagValue string, e *env) string {
	if flagValue != "" {
		return flagValue
	}
	if v := e.getenv("AGENTHOST_CONFIG"); v != "" {
		return v
	}
	return "agents.hcl"
}

// loadConfig loads and validates the config, printing every diagnostic.
// It returns a non-zero exit code when nothing may run.
func loadConfig(path string, e *env) (*config.Config, int) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "agenthost: config file %s not found: pass -c FILE, set AGENTHOST_CONFIG, or run 'agenthost init' to write a starter agents.hcl\n", path)
		return nil, exitUsage
	}
	cfg, files, diags := config.LoadFiles(path, config.Options{LookupEnv: e.lookupEnv})
	if len(diags) > 0 {
		config.WriteDiagnostics(e.stderr, files, diags, useColor(e))
	}
	if diags.HasErrors() {
		return nil, exitUsage
	}
	return cfg, exitOK
}

// loadHost loads the config and builds the host (plugins loaded and
// compiled). Config problems found while loading plugins are printed as
// diagnostics too.
func loadHost(ctx context.Context, path string, opts host.Options, e *env) (*host.Host, int) {
	cfg, code := loadConfig(path, e)
	if code != exitOK {
		return nil, code
	}
	h, diags, err := host.New(ctx, cfg, opts)
	if len(diags) > 0 {
		config.WriteDiagnostics(e.stderr, cfg.Files, diags, useColor(e))
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

func useColor(e *env) bool {
	return e.stderrTTY && e.getenv("NO_COLOR") == ""
}
