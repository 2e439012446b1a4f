// Package tracing exports runs as OpenTelemetry traces that follow the GenAI
// semantic conventions: one trace per run, an invoke_agent span per agent
// (subagents nested under the execute_tool span that called them), a chat
// span per model request and an execute_tool span per tool call.
//
// It is fed by the loop's events (a Run is a loop.Sink), so the loop itself
// knows nothing of OpenTelemetry. The OpenTelemetry SDK and its exporters
// are imported here only: the host creates a Tracer on the first run that
// has tracing on, and none otherwise.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/loop"
)

// The environment variables that decide whether traces are exported and
// how. The exporter reads the others of the OTLP exporter (headers,
// timeout, compression, certificates) itself.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	// EnvCaptureContent set to true records prompts, answers, tool
	// arguments and tool results on the spans.
	EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// ShutdownTimeout bounds the flush of the spans still buffered when the
// process ends: a collector that does not answer delays the exit by at
// most this.
const ShutdownTimeout = 2 * time.Second

// Wanted reports whether traces are to be exported: the config asks for
// them (host { otel = true }) or an OTLP endpoint is set in the
// environment, and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none turns them off.
func Wanted(config bool, getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return false
	}
	if strings.TrimSpace(getenv(EnvTracesExporter)) == "none" {
		return false
	}
	return config || getenv(EnvEndpoint) != "" || getenv(EnvTracesEndpoint) != ""
}

// Agent is what a trace says of an agent's model.
type Agent struct {
	// Model is the model id sent to the provider.
	Model string
	// Provider is the provider block's name.
	Provider string
	// ServerAddress and ServerPort come from the provider's base_url.
	ServerAddress string
	ServerPort    int
	// Description is the agent's description.
	Description string
}

// Tool is what a trace says of a tool.
type Tool struct {
	// Plugin is the plugin (or mcp_server) that provides it.
	Plugin string
	// Kind is the plugin's kind (agenthost, wasi_cli, extism, mcp).
	Kind string
}

// Options configure a Tracer.
type Options struct {
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
	// Version is agenthost's version, the resource's service.version.
	Version string
	// Agents and Tools describe the config's agents and tools, by name.
	Agents map[string]Agent
	Tools  map[string]Tool
	// Warn reports a problem with the export (a collector that cannot be
	// reached, an unsupported setting). It is called at most once per
	// kind of problem; nil drops the warnings.
	Warn func(string)
}

// Tracer exports the traces of runs. Its methods are safe for concurrent
// use; each Run is not (a run's events come in order from one goroutine).
type Tracer struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	capture bool
	agents  map[string]Agent
	tools   map[string]Tool
	warn    *warner
}

// New makes a Tracer that exports to the OTLP endpoint the environment
// names (OTEL_EXPORTER_OTLP_ENDPOINT and the other standard variables; the
// SDK's default, localhost, without one) over OTLP/HTTP with protobuf, or
// gRPC when OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL is grpc. Creating it
// makes no connection.
func New(ctx context.Context, opts Options) (*Tracer, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	w := &warner{warn: opts.Warn}
	proto := getenv(EnvTracesProtocol)
	protoVar := EnvTracesProtocol
	if proto == "" {
		proto, protoVar = getenv(EnvProtocol), EnvProtocol
	}
	// Without an endpoint in the environment (host { otel = true } alone)
	// the exporter's default host is used, in plain text as the OTLP
	// specification has it (http://localhost:4318, localhost:4317 for
	// gRPC): the SDK would otherwise use TLS, which a local collector or
	// Jaeger does not speak.
	local := getenv(EnvEndpoint) == "" && getenv(EnvTracesEndpoint) == ""
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch proto {
	case "", "http/protobuf", "http/json":
		if proto == "http/json" {
			w.once("protocol", fmt.Sprintf("traces: %s=http/json is not supported; sending OTLP/HTTP with protobuf, which every OTLP/HTTP receiver accepts too", protoVar))
		}
		// No retries: an export that fails is reported and dropped, so an
		// unreachable collector never holds a run or its exit.
		o := []otlptracehttp.Option{otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if local {
			o = append(o, otlptracehttp.WithInsecure())
		}
		exp, err = otlptracehttp.New(ctx, o...)
	case "grpc":
		o := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if local {
			o = append(o, otlptracegrpc.WithInsecure())
		}
		exp, err = otlptracegrpc.New(ctx, o...)
	default:
		return nil, fmt.Errorf("%s=%q: use http/protobuf (the default) or grpc", protoVar, proto)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	return newTracer(ctx, opts, getenv, w, sdktrace.WithBatcher(exp))
}

// NewWithExporter makes a Tracer that hands its spans to exp as each one
// ends (tests use an in-memory exporter).
func NewWithExporter(ctx context.Context, exp sdktrace.SpanExporter, opts Options) (*Tracer, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return newTracer(ctx, opts, getenv, &warner{warn: opts.Warn}, sdktrace.WithSyncer(exp))
}

func newTracer(ctx context.Context, opts Options, getenv func(string) string, w *warner, proc sdktrace.TracerProviderOption) (*Tracer, error) {
	// service.name is agenthost unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES says otherwise (detectors applied later win).
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agenthost"), attribute.String("service.version", opts.Version)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	if err != nil {
		w.once("resource", "traces: "+err.Error())
	}
	// Export failures happen in the background; they are reported once as
	// a warning, never as a failure of the run.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		w.once("export", "traces: export failed (is the collector reachable?): "+err.Error())
	}))
	tp := sdktrace.NewTracerProvider(proc, sdktrace.WithResource(res))
	return &Tracer{
		tp:      tp,
		tracer:  tp.Tracer("github.com/agenthost/agenthost", trace.WithInstrumentationVersion(opts.Version)),
		capture: strings.EqualFold(strings.TrimSpace(getenv(EnvCaptureContent)), "true"),
		agents:  opts.Agents,
		tools:   opts.Tools,
		warn:    w,
	}, nil
}

// Shutdown exports the spans still buffered and stops the exporter,
// waiting at most ShutdownTimeout (less when ctx ends sooner). A failure
// is returned and reported through Options.Warn.
func (t *Tracer) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	err := t.tp.Shutdown(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the collector did not answer within %s: %w", ShutdownTimeout, err)
		}
		t.warn.once("export", "traces: not all spans were exported: "+err.Error())
	}
	return err
}

// warner reports each kind of problem once.
type warner struct {
	warn func(string)
	mu   sync.Mutex
	seen map[string]bool
}

func (w *warner) once(kind, msg string) {
	if w.warn == nil {
		return
	}
	w.mu.Lock()
	if w.seen[kind] {
		w.mu.Unlock()
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[kind] = true
	w.mu.Unlock()
	w.warn(msg)
}

// Run starts the trace of one run: feed it every event of the run, in
// order. session is the run's session id (gen_ai.conversation.id); history
// is the conversation the run continues, used only when content is
// captured.
func (t *Tracer) Run(session string, history []loop.Message) *Run {
	r := &Run{t: t, session: session, agents: t.agents}
	if t.capture {
		r.history = history
	}
	return r
}

var _ loop.Sink = (*Run)(nil)
