package doctor

import (
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/cassette"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/loop"
)

// FailureHint is the line printed under the error that stopped a run
// (run, chat), saying what to do when the cause is known; "" otherwise.
// A failed model request gets the advice doctor gives for the same cause
// (Hint) and a pointer to doctor; a replay that missed because the
// model's name comes from a variable says which. The model and provider
// are those of the run's agent: an error of a subagent does not stop the
// run. getenv reads the variables that name models.
func FailureHint(cfg *config.Config, res *loop.Result, getenv func(string) string) string {
	if res == nil || res.Err == nil || cfg == nil {
		return ""
	}
	a := cfg.Agent(res.Agent)
	if a == nil {
		return ""
	}
	m := cfg.Model(a.Model)
	if m == nil {
		return ""
	}
	var miss *cassette.MissError
	if errors.As(res.Err, &miss) {
		return replayHint(m, miss, getenv)
	}
	if h := Hint(cfg.Provider(m.Provider), m, res.Err); h != "" {
		return h + "; check with 'agenthost doctor'"
	}
	return ""
}

// replayHint explains a cassette miss that comes from the model's name,
// when the name is read from a variable: set, it names another model than
// the recording's; unset, the recording was made with it set.
func replayHint(m *config.Model, miss *cassette.MissError, getenv func(string) string) string {
	if miss.Recorded == "" || miss.Recorded == miss.Model || len(m.IDEnv) == 0 {
		return ""
	}
	for _, name := range m.IDEnv {
		if v := getenv(name); v != "" {
			return fmt.Sprintf("model %q is named %q by $%s, but the cassette was recorded with %q: unset %s (or set it to %q) to replay it",
				m.Name, miss.Model, name, miss.Recorded, name, miss.Recorded)
		}
	}
	return fmt.Sprintf("the cassette was recorded with model %q, and model %q is named %q: set %s=%s to replay it",
		miss.Recorded, m.Name, miss.Model, m.IDEnv[0], shquote.Quote(miss.Recorded))
}
