package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// otlprecv is the OTLP/HTTP trace receiver of the scripts: a loopback
// server that decodes what exporters send with the OpenTelemetry
// Collector's own OTLP decoding (pdata), as a collector would.
//
//	otlprecv start [-hang | -grpc]
//	                        start receiving; sets OTEL_EXPORTER_OTLP_ENDPOINT
//	                        (http://HOST:PORT) and OTLPRECV_ADDR (HOST:PORT).
//	                        With -hang, requests are never answered (a
//	                        collector that does not respond); with -grpc it
//	                        is an OTLP/gRPC receiver and sets
//	                        OTEL_EXPORTER_OTLP_PROTOCOL=grpc too.
//	otlprecv spans          print every span received, one JSON object a line
//	otlprecv tree           print the spans as trees, one per trace: a line
//	                        per span (name, kind, status, attributes), its
//	                        events below it, then its children in start order.
//	                        Values that change from run to run are shown as *.
//	otlprecv requests N     assert exactly N export requests were received
func cmdOTLPRecv(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: otlprecv start [-hang] | spans | tree | requests N")
	}
	if args[0] == "start" {
		mode := ""
		if len(args) == 2 {
			mode = args[1]
		}
		if neg || len(args) > 2 || (mode != "" && mode != "-hang" && mode != "-grpc") {
			ts.Fatalf("usage: otlprecv start [-hang | -grpc]")
		}
		r, err := startOTLPRecv(mode)
		ts.Check(err)
		receivers.Store(ts, r)
		ts.Defer(func() { r.close(); receivers.Delete(ts) })
		if mode == "-grpc" {
			ts.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
		}
		ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.addr)
		ts.Setenv("OTLPRECV_ADDR", r.addr)
		return
	}
	v, ok := receivers.Load(ts)
	if !ok {
		ts.Fatalf("otlprecv %s: no receiver; run 'otlprecv start' first", args[0])
	}
	r := v.(*otlpRecv)
	switch args[0] {
	case "spans":
		for _, s := range r.snapshot() {
			b, err := json.Marshal(s)
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "%s\n", b)
		}
	case "tree":
		fmt.Fprint(ts.Stdout(), spanTree(r.snapshot()))
	case "requests":
		if len(args) != 2 {
			ts.Fatalf("usage: otlprecv requests N")
		}
		var want int
		_, err := fmt.Sscan(args[1], &want)
		ts.Check(err)
		r.mu.Lock()
		got := r.requests
		r.mu.Unlock()
		if (got == want) == neg {
			ts.Fatalf("otlprecv received %d export requests, want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	default:
		ts.Fatalf("otlprecv: unknown subcommand %q", args[0])
	}
}

var receivers sync.Map // *testscript.TestScript → *otlpRecv

// recvSpan is one received span, as `otlprecv spans` prints it.
type recvSpan struct {
	TraceID       string         `json:"trace_id"`
	SpanID        string         `json:"span_id"`
	ParentSpanID  string         `json:"parent_span_id"`
	Name          string         `json:"name"`
	Kind          string         `json:"kind"`
	Status        string         `json:"status"`
	StatusMessage string         `json:"status_message,omitempty"`
	Start         uint64         `json:"start_unix_nano"`
	End           uint64         `json:"end_unix_nano"`
	Attributes    map[string]any `json:"attributes"`
	Events        []recvEvent    `json:"events,omitempty"`
	Resource      map[string]any `json:"resource"`
	Scope         string         `json:"scope"`
}

type recvEvent struct {
	Name       string         `json:"name"`
	Time       uint64         `json:"time_unix_nano"`
	Attributes map[string]any `json:"attributes"`
}

type otlpRecv struct {
	addr     string
	srv      *http.Server
	grpc     *grpc.Server
	hang     chan struct{}
	mu       sync.Mutex
	spans    []recvSpan
	requests int
}

func startOTLPRecv(mode string) (*otlpRecv, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &otlpRecv{addr: ln.Addr().String()}
	if mode == "-grpc" {
		r.grpc = grpc.NewServer()
		ptraceotlp.RegisterGRPCServer(r.grpc, &grpcRecv{r: r})
		go r.grpc.Serve(ln)
		return r, nil
	}
	if mode == "-hang" {
		r.hang = make(chan struct{})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	r.srv = &http.Server{Handler: mux}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *otlpRecv) close() {
	if r.grpc != nil {
		r.grpc.Stop()
		return
	}
	if r.hang != nil {
		close(r.hang)
	}
	r.srv.Close()
}

// grpcRecv is the OTLP/gRPC trace service.
type grpcRecv struct {
	ptraceotlp.UnimplementedGRPCServer
	r *otlpRecv
}

func (g *grpcRecv) Export(_ context.Context, er ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	g.r.add(flatten(er.Traces()))
	return ptraceotlp.NewExportResponse(), nil
}

func (r *otlpRecv) add(spans []recvSpan) {
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.requests++
	r.mu.Unlock()
}

// export decodes one OTLP/HTTP export request (protobuf or JSON, gzip or
// not) and answers as a collector does.
func (r *otlpRecv) export(w http.ResponseWriter, req *http.Request) {
	if r.hang != nil {
		select {
		case <-r.hang:
		case <-req.Context().Done():
		}
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	er := ptraceotlp.NewExportRequest()
	jsonBody := req.Header.Get("Content-Type") == "application/json"
	if jsonBody {
		err = er.UnmarshalJSON(b)
	} else {
		err = er.UnmarshalProto(b)
	}
	if err != nil {
		http.Error(w, "decoding the export request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(flatten(er.Traces()))
	resp := ptraceotlp.NewExportResponse()
	var out []byte
	if jsonBody {
		out, err = resp.MarshalJSON()
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, err = resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(out)
}

func flatten(td ptrace.Traces) []recvSpan {
	var out []recvSpan
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes().AsRaw()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			sps := ss.Spans()
			for k := 0; k < sps.Len(); k++ {
				sp := sps.At(k)
				s := recvSpan{
					TraceID:       sp.TraceID().String(),
					SpanID:        sp.SpanID().String(),
					ParentSpanID:  sp.ParentSpanID().String(),
					Name:          sp.Name(),
					Kind:          sp.Kind().String(),
					Status:        sp.Status().Code().String(),
					StatusMessage: sp.Status().Message(),
					Start:         uint64(sp.StartTimestamp()),
					End:           uint64(sp.EndTimestamp()),
					Attributes:    sp.Attributes().AsRaw(),
					Resource:      res,
					Scope:         ss.Scope().Name(),
				}
				evs := sp.Events()
				for e := 0; e < evs.Len(); e++ {
					ev := evs.At(e)
					s.Events = append(s.Events, recvEvent{Name: ev.Name(), Time: uint64(ev.Timestamp()), Attributes: ev.Attributes().AsRaw()})
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func (r *otlpRecv) snapshot() []recvSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// volatile are the attributes whose values change from run to run; the
// tree shows them as *.
var volatile = map[string]bool{
	"gen_ai.conversation.id":   true,
	"server.port":              true,
	"agenthost.retry.delay_ms": true,
}

// spanTree renders spans as one tree per trace, traces in the order of
// their first span's start. A span whose parent was not received is shown
// at the top level with "(parent missing)".
func spanTree(spans []recvSpan) string {
	slices.SortStableFunc(spans, func(a, b recvSpan) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Name, b.Name))
	})
	byID := map[string]bool{}
	for _, s := range spans {
		byID[s.TraceID+"/"+s.SpanID] = true
	}
	children := map[string][]recvSpan{}
	var traces []string
	for _, s := range spans {
		if !slices.Contains(traces, s.TraceID) {
			traces = append(traces, s.TraceID)
		}
		key := s.TraceID + "/"
		if s.ParentSpanID != "" {
			key += s.ParentSpanID
			if !byID[key] {
				key = s.TraceID + "/missing"
			}
		}
		children[key] = append(children[key], s)
	}
	var b strings.Builder
	for i, t := range traces {
		roots := children[t+"/"]
		service := ""
		if len(roots) > 0 {
			service = fmt.Sprint(roots[0].Resource["service.name"])
		}
		fmt.Fprintf(&b, "trace %d service.name=%s\n", i+1, service)
		var walk func(s recvSpan, depth int, note string)
		walk = func(s recvSpan, depth int, note string) {
			indent := strings.Repeat("  ", depth+1)
			status := s.Status
			if s.StatusMessage != "" {
				status += fmt.Sprintf("(%s)", s.StatusMessage)
			}
			fmt.Fprintf(&b, "%s%s%s [%s %s]%s\n", indent, s.Name, note, strings.TrimPrefix(s.Kind, "Span"), status, attrText(s.Attributes))
			for _, ev := range s.Events {
				fmt.Fprintf(&b, "%s  + event %s%s\n", indent, ev.Name, attrText(ev.Attributes))
			}
			for _, c := range children[s.TraceID+"/"+s.SpanID] {
				walk(c, depth+1, "")
			}
		}
		for _, s := range roots {
			walk(s, 0, "")
		}
		for _, s := range children[t+"/missing"] {
			walk(s, 0, " (parent missing)")
		}
	}
	return b.String()
}

// attrText is " key=value" for each attribute, sorted by key, values as
// JSON.
func attrText(attrs map[string]any) string {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		v := "*"
		if !volatile[k] {
			j, _ := json.Marshal(attrs[k])
			v = string(j)
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	return b.String()
}
