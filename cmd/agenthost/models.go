package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/doctor"
)

// newModelsCmd is `agenthost models [PROVIDER]`: the models each provider
// of the config serves (doctor.ListServed). Exit 1 when a provider's list
// could not be read.
func newModelsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models [PROVIDER]",
		Short: "List the models the providers serve (GET /models)",
		Long: `List the models each provider of the config serves, as its GET /models answers, with
the model blocks that name each; PROVIDER narrows the list to one provider. Exit 1 when a
provider's list could not be read (the reason and what to do are printed).`,
		Example: "  agenthost models\n  agenthost models ollama --json",
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	asJSON := jsonFlag(fs, "print JSON")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) > 1 {
			return usageErr(e, "models takes at most one provider name (got %q)", pos)
		}
		cfg, code := loadConfig(configPath(*cfgFlag, e), e)
		if code != exitOK {
			return code
		}
		providers := cfg.Providers
		if len(pos) == 1 {
			p := cfg.Provider(pos[0])
			if p == nil {
				names := make([]string, len(cfg.Providers))
				for i, p := range cfg.Providers {
					names[i] = p.Name
				}
				return usageErr(e, "no provider %q; providers: %s", pos[0], strings.Join(names, ", "))
			}
			providers = []*config.Provider{p}
		}
		out := doctor.ListServed(ctx, cfg, providers)
		if *asJSON {
			if code := writeJSON(e, out); code != exitOK {
				return code
			}
		} else {
			doctor.WriteServed(e.stdout, out, func(s string) string { return outText(e, s) })
		}
		if slices.ContainsFunc(out, func(s doctor.Served) bool { return s.Error != "" }) {
			return exitError
		}
		return exitOK
	})
}
