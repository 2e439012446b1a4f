package host

import (
	"context"
	"net"
	"net/url"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/tracing"
	"github.com/agenthost/agenthost/loop"
)

// Traces (package tracing): a Host whose config has host { otel = true },
// or whose environment names an OTLP endpoint, exports one trace per run.
// The exporter is made by the first run, so commands that run nothing
// (validate, tools, doctor) never make one, and a Host without tracing
// pays nothing per event.

// runTracer returns the trace of a run in session, or nil when traces are
// off (or the exporter could not be made: a warning says why, once).
func (h *Host) runTracer(ctx context.Context, session string, history []loop.Message) *tracing.Run {
	if !h.tracingWanted {
		return nil
	}
	h.tracerOnce.Do(func() {
		log := *zerolog.Ctx(ctx)
		warn := func(msg string) { log.Warn().Msg(msg) }
		// The exporter outlives this run (a chat turn's context ends
		// with the turn).
		t, err := tracing.New(context.WithoutCancel(ctx), tracing.Options{
			Getenv:  h.getenv,
			Version: h.version,
			Agents:  h.traceAgents(),
			Tools:   h.traceTools(),
			Warn:    warn,
		})
		if err != nil {
			warn("traces: not exported: " + err.Error())
			return
		}
		h.tracer = t
	})
	if h.tracer == nil {
		return nil
	}
	return h.tracer.Run(session, history)
}

// closeTracer flushes the spans left to export, within
// tracing.ShutdownTimeout; a failure is a warning, never an error of the
// run.
func (h *Host) closeTracer(ctx context.Context) {
	if h.tracer != nil {
		_ = h.tracer.Shutdown(context.WithoutCancel(ctx))
	}
}

// traceAgents describes every agent's model for the traces.
func (h *Host) traceAgents() map[string]tracing.Agent {
	out := map[string]tracing.Agent{}
	for _, a := range h.Config.Agents {
		id := ""
		if la := h.agents[a.Name]; la != nil {
			id = la.ModelID
		}
		out[a.Name] = h.traceAgent(a, h.Config.Model(a.Model), id)
	}
	return out
}

// traceAgent describes agent a with model block m (nil: none) and the
// model id its requests name, for the traces.
func (h *Host) traceAgent(a *config.Agent, m *config.Model, id string) tracing.Agent {
	ta := tracing.Agent{Description: a.Description, Model: id}
	if m == nil {
		return ta
	}
	if m.Provider == config.ProviderMCPClient {
		ta.Provider = m.Provider
	}
	if p := h.Config.Provider(m.Provider); p != nil {
		ta.Provider = p.Name
		ta.ServerAddress, ta.ServerPort = serverOf(p.BaseURL)
	}
	return ta
}

// traceTools describes every tool's plugin for the traces.
func (h *Host) traceTools() map[string]tracing.Tool {
	out := map[string]tracing.Tool{}
	for _, t := range h.Tools() {
		out[t.Name] = tracing.Tool{Plugin: t.Plugin, Kind: string(t.Kind)}
	}
	return out
}

// serverOf is the host and port of a base URL (the scheme's default port
// when it names none); "" when it does not parse. Credentials and the path
// are left out.
func serverOf(base string) (string, int) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", 0
	}
	host, portStr, err := net.SplitHostPort(u.Host)
	if err != nil {
		host = u.Hostname()
		switch u.Scheme {
		case "http":
			return host, 80
		case "https":
			return host, 443
		}
		return host, 0
	}
	port, _ := strconv.Atoi(portStr)
	return host, port
}
