package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/buildinfo"
	"github.com/agenthost/agenthost/cmd/agenthost/internal/complete"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// newVersionCmd is `agenthost version`: the module version, and the
// commit and its date when the build recorded them (buildinfo.Write).
func newVersionCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
	}
	return c.noArgs(cmd, func(_ context.Context, e *env) int {
		buildinfo.Write(e.stdout)
		return exitOK
	})
}

// newManCmd is `agenthost man DIR`.
func newManCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages to DIR",
		Long: `Write a man page for agenthost and each of its commands to DIR (section 1). The
pages of this version are in docs/man.`,
		Example: "  agenthost man /usr/local/share/man/man1",
	}
	return c.action(cmd, c.cmdMan)
}

// cmdMan writes the man pages.
func (c *cli) cmdMan(_ context.Context, args []string, e *env) int {
	if len(args) != 1 {
		return usageErr(e, "usage: agenthost man DIR")
	}
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: man: %v\n", err)
		return exitError
	}
	// A fixed date: the pages change with the commands, not the day.
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	root := (&cli{ctx: c.ctx, e: e}).tree()
	hdr := &doc.GenManHeader{Title: "AGENTHOST", Section: "1", Source: "agenthost", Manual: "agenthost manual", Date: &date}
	if err := doc.GenManTree(root, hdr, args[0]); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: man: %v\n", err)
		return exitError
	}
	return exitOK
}

// noFiles completes nothing (a prompt, no arguments).
var noFiles = complete.NoFiles

// complete is the shell completion of what the config names: the config
// -c names (configPath), loaded quietly; its tools loaded within 5 seconds.
func (c *cli) complete() complete.Source {
	return complete.Source{
		LoadConfig: func(configFlag string) *config.Config {
			cfg, _, diags := config.LoadFiles(configPath(configFlag, c.e), config.Options{LookupEnv: c.e.lookupEnv})
			if diags.HasErrors() {
				return nil
			}
			return cfg
		},
		LoadTools: func(configFlag string) []host.Tool {
			ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
			defer cancel()
			qe := *c.e
			qe.stdout, qe.stderr = io.Discard, io.Discard
			h, code := loadHost(ctx, configPath(configFlag, c.e), hostOptions(&qe), &qe)
			if code != exitOK {
				return nil
			}
			defer h.Close(ctx)
			return h.Tools()
		},
	}
}
