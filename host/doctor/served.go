package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/redact"
)

// Served is one provider's answer to `agenthost models`: the models its
// GET /models lists, or why the list could not be read.
type Served struct {
	Provider string        `json:"provider"`
	BaseURL  string        `json:"base_url"`
	Models   []ServedModel `json:"models"`
	// Error and Hint say why the list could not be read, and what to do.
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// ServedModel is a model a provider serves, and the model blocks of the
// config that name it.
type ServedModel struct {
	ID     string   `json:"id"`
	UsedBy []string `json:"used_by"`
}

// ListServed asks each provider for its models (ListModels), at once,
// and marks the model blocks of cfg that use each. Credentials never
// appear in what it returns.
func ListServed(ctx context.Context, cfg *config.Config, providers []*config.Provider) []Served {
	out := make([]Served, len(providers))
	done := make(chan struct{})
	for i, p := range providers {
		go func() {
			defer func() { done <- struct{}{} }()
			s := Served{Provider: p.Name, BaseURL: redact.URL(p.BaseURL), Models: []ServedModel{}}
			ids, status, err := ListModels(ctx, &http.Client{Timeout: Timeout}, p)
			if err != nil {
				s.Error = scrubber(p).Replace(err.Error())
				s.Hint = ListHint(p, status, err)
			}
			for _, id := range ids {
				m := ServedModel{ID: id, UsedBy: []string{}}
				for _, mb := range cfg.Models {
					if mb.Provider == p.Name && mb.ID == id {
						m.UsedBy = append(m.UsedBy, mb.Name)
					}
				}
				s.Models = append(s.Models, m)
			}
			out[i] = s
		}()
	}
	for range providers {
		<-done
	}
	return out
}

// WriteServed prints the lists for a person: a line per provider, then
// its models, one a line, with the model blocks that use each. esc
// escapes what the servers wrote.
func WriteServed(w io.Writer, out []Served, esc func(string) string) {
	for _, s := range out {
		if s.Error != "" {
			fmt.Fprintf(w, "provider %s (%s): %s\n", s.Provider, s.BaseURL, esc(s.Error))
			if s.Hint != "" {
				fmt.Fprintf(w, "  fix: %s\n", s.Hint)
			}
			continue
		}
		fmt.Fprintf(w, "provider %s (%s): %d %s\n", s.Provider, s.BaseURL, len(s.Models), plural(len(s.Models), "model", "models"))
		for _, m := range s.Models {
			line := "  " + esc(m.ID)
			if len(m.UsedBy) > 0 {
				line += "  (model " + strings.Join(m.UsedBy, ", ") + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
}
