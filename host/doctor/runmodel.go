package doctor

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// checkTimeout bounds the GET /models of CheckModel: it delays the run.
const checkTimeout = 10 * time.Second

// UnknownModelError is a model asked for a run (-m) that is neither a
// model block nor a model the agent's provider serves.
type UnknownModelError struct {
	Name     string
	Provider string   // the agent's model's provider
	Blocks   []string // the model blocks' names, in config order
}

func (e *UnknownModelError) Error() string {
	return fmt.Sprintf("-m %s: not a model block (model blocks: %s) nor a model provider %q serves; 'agenthost models %s' lists those",
		e.Name, strings.Join(e.Blocks, ", "), e.Provider, e.Provider)
}

// CheckRunModel checks that a run of agent ("" for the default one) can use
// model name (host.RunModel): a model block's name or model id needs no
// question; another name must be listed by the GET /models of the
// agent's provider, else it is an *UnknownModelError. When the list
// cannot be read the name is used as given, and warn says why; an agent
// whose model is the MCP client's takes any name (a hint to the client).
// "" is the agent's own model. The errors are *host.UsageError: an
// unknown agent's (host.ResolveAgent), or one with an
// *UnknownModelError.
func CheckRunModel(ctx context.Context, cfg *config.Config, agent, name string) (warn string, err error) {
	if name == "" {
		return "", nil
	}
	agent, err = host.ResolveAgent(cfg, agent)
	if err != nil {
		return "", err
	}
	m, block := host.RunModel(cfg, agent, name)
	if block || m.Provider == config.ProviderMCPClient {
		return "", nil
	}
	p := cfg.Provider(m.Provider)
	ids, _, lerr := ListModels(ctx, &http.Client{Timeout: checkTimeout}, p)
	if lerr != nil {
		msg := scrubber(p).Replace(lerr.Error())
		return fmt.Sprintf("model %q is not a model block, and provider %q's models could not be listed (%s): using it as the model id", name, p.Name, msg), nil
	}
	if slices.Contains(ids, name) {
		return "", nil
	}
	blocks := make([]string, len(cfg.Models))
	for i, b := range cfg.Models {
		blocks[i] = b.Name
	}
	return "", &host.UsageError{Err: &UnknownModelError{Name: name, Provider: p.Name, Blocks: blocks}}
}
