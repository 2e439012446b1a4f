package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/doctor"
	"github.com/agenthost/agenthost/internal/redact"
)

// providerModels is one provider's answer in `agenthost models --json`.
type providerModels struct {
	Provider string        `json:"provider"`
	BaseURL  string        `json:"base_url"`
	Models   []servedModel `json:"models"`
	// Error and Hint say why the list could not be read, and what to do.
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// servedModel is a model a provider serves, and the model blocks that
// name it.
type servedModel struct {
	ID     string   `json:"id"`
	UsedBy []string `json:"used_by"`
}

// newModelsCmd is `agenthost models [PROVIDER]`: the models each provider
// of the config serves, as its GET /models lists them, with the model
// blocks that use each. Exit 1 when a provider's list could not be read.
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
		out := listProviderModels(ctx, cfg, providers)
		failed := slices.ContainsFunc(out, func(pm providerModels) bool { return pm.Error != "" })
		if *asJSON {
			if code := writeJSON(e, out); code != exitOK {
				return code
			}
		} else {
			writeProviderModels(e, out)
		}
		if failed {
			return exitError
		}
		return exitOK
	})
}

// listProviderModels asks each provider for its models, concurrently.
func listProviderModels(ctx context.Context, cfg *config.Config, providers []*config.Provider) []providerModels {
	out := make([]providerModels, len(providers))
	done := make(chan struct{})
	for i, p := range providers {
		go func() {
			defer func() { done <- struct{}{} }()
			pm := providerModels{Provider: p.Name, BaseURL: redact.URL(p.BaseURL), Models: []servedModel{}}
			ids, status, err := doctor.ListModels(ctx, &http.Client{Timeout: doctor.Timeout}, p)
			if err != nil {
				pm.Error = redact.NewReplacer(append(redact.Secrets(p.BaseURL), p.APIKey)...).Replace(err.Error())
				pm.Hint = doctor.ListHint(p, status, err)
			}
			for _, id := range ids {
				sm := servedModel{ID: id, UsedBy: []string{}}
				for _, m := range cfg.Models {
					if m.Provider == p.Name && m.ID == id {
						sm.UsedBy = append(sm.UsedBy, m.Name)
					}
				}
				pm.Models = append(pm.Models, sm)
			}
			out[i] = pm
		}()
	}
	for range providers {
		<-done
	}
	return out
}

// writeProviderModels prints the lists for a person: a line per provider,
// then its models, one a line, with the model blocks that use each.
func writeProviderModels(e *env, out []providerModels) {
	for _, pm := range out {
		if pm.Error != "" {
			fmt.Fprintf(e.stdout, "provider %s (%s): %s\n", pm.Provider, pm.BaseURL, outText(e, pm.Error))
			if pm.Hint != "" {
				fmt.Fprintf(e.stdout, "  fix: %s\n", pm.Hint)
			}
			continue
		}
		fmt.Fprintf(e.stdout, "provider %s (%s): %d %s\n", pm.Provider, pm.BaseURL, len(pm.Models), term.Plural(len(pm.Models), "model", "models"))
		for _, m := range pm.Models {
			line := "  " + outText(e, m.ID)
			if len(m.UsedBy) > 0 {
				line += "  (model " + strings.Join(m.UsedBy, ", ") + ")"
			}
			fmt.Fprintln(e.stdout, line)
		}
	}
}
