// Package mcptest is the MCP server of agenthost's tests, made with the
// official Go SDK: host/mcpuse's tests and the script tests of
// cmd/agenthost run it as a stdio server (Serve), and the scripts serve it
// over streamable HTTP on loopback too (StartHTTP).
package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecordEnv names the environment variable holding the file the block
// and gather tools append their record lines to (see newServer).
const RecordEnv = "MCPTEST_RECORD"

// Serve serves on stdin/stdout until stdin closes and returns the exit
// code. Modes: "tools" serves the tools of newServer; "hostile" serves the
// tools of hostileServer; "hang-init" never answers; "garbage-init"
// answers everything with garbage; "hostile-init" answers every request
// with a JSON-RPC error whose message carries terminal control sequences.
func Serve(mode string) int {
	switch mode {
	case "tools":
		srv := newServer(os.Getenv(RecordEnv))
		fmt.Fprintln(os.Stderr, "mcptest server ready")
		srv.Run(context.Background(), &mcp.StdioTransport{})
	case "hostile":
		fmt.Fprintln(os.Stderr, "stderr "+Hostile)
		hostileServer().Run(context.Background(), &mcp.StdioTransport{})
	case "hostile-init":
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
				continue
			}
			msg, _ := json.Marshal("init refused " + Hostile)
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`+"\n", req.ID, msg)
		}
	case "hang-init":
		select {}
	case "garbage-init":
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				return 0
			}
			os.Stdout.WriteString("}{ this is not JSON-RPC\n")
		}
	default:
		fmt.Fprintf(os.Stderr, "mcptest: unknown mode %q (tools, hang-init, garbage-init)\n", mode)
		return 2
	}
	return 0
}

// HTTPServer is the test server served over streamable HTTP.
type HTTPServer struct {
	URL string // http://127.0.0.1:PORT/mcp
	hs  *http.Server
}

// Close stops the server.
func (s *HTTPServer) Close() error { return s.hs.Close() }

// StartHTTP serves the tools of newServer over streamable HTTP at
// http://127.0.0.1:PORT/mcp (loopback only, a free port). With token set,
// a request without "Authorization: Bearer TOKEN" is answered 401, as a
// protected server does. record is as for the stdio server.
func StartHTTP(token, record string) (*HTTPServer, error) {
	return StartHTTPWith(HTTPOptions{Token: token, Record: record})
}

// HTTPOptions are the settings of StartHTTPWith.
type HTTPOptions struct {
	Token, Record string // as for StartHTTP
	// JSON answers each call with one application/json body instead of
	// an event stream.
	JSON bool
}

// StartHTTPWith is StartHTTP with more settings. Over HTTP, a call of the
// tool drop gets no answer: its connection is closed.
func StartHTTPWith(o HTTPOptions) (*HTTPServer, error) {
	token, record := o.Token, o.Record
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := newServer(record)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: o.JSON})
	// The SDK answers a notification's POST (202) before it handles it:
	// a notifications/cancelled is recorded here, as it arrives, so that
	// a test knows the server has it once the client got the answer.
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if bytes.Contains(body, []byte(`"method":"notifications/cancelled"`)) {
				appendLine(record, "POST notifications/cancelled")
			}
			if bytes.Contains(body, []byte(`"name":"drop"`)) {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					conn.Close()
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sdk.ServeHTTP(w, r)
	})
	if token != "" {
		next, want := h, []byte("Bearer "+token)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcptest"`)
				http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &HTTPServer{URL: fmt.Sprintf("http://%s/mcp", ln.Addr()), hs: hs}, nil
}

// newServer serves echo (echoes its arguments), fail (an error result),
// pid (the server's process id), hang (never answers), crash (exits
// mid-call), garbage (writes garbage on stdout, then hangs), header (the
// value of an HTTP request header, over HTTP), block (waits until the
// call is cancelled), gather (waits until n calls of it are in flight),
// big (a text of n bytes, "x" repeated), many (n texts of size bytes
// each), drop (over HTTP, see StartHTTPWith), ask (asks the user a
// question: elicitation), sample (asks the client's model: sampling),
// roots (the client's roots) and swap (replaces
// echo by echo2, and tells the client its tools changed).
//
// The server appends lines to the file record (when not ""), so that a
// test sees from outside what it saw: "block started";
// "notifications/cancelled: REASON" when the client cancels a call (the
// notification itself: the call's context is cancelled on another
// goroutine, which may lose the race with the connection's end when the
// client exits right after); "gather N of M in flight". Over HTTP,
// "POST notifications/cancelled" is recorded as the request arrives.
func newServer(record string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	rec := func(line string) { appendLine(record, line) }
	// listed is sent a value at each tools/list (swap waits for one).
	listed := make(chan struct{}, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case listed <- struct{}{}:
				default:
				}
			}
			if method == "notifications/cancelled" {
				if p, ok := req.GetParams().(*mcp.CancelledParams); ok {
					rec(fmt.Sprintf("notifications/cancelled: %s", p.Reason))
				}
			}
			return next(ctx, method, req)
		}
	})
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("echo: " + strings.Trim(string(req.Params.Arguments), "{}")), nil
	})
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Fail.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("failed on purpose")
		r.IsError = true
		return r, nil
	})
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "The server's process id.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	srv.AddTool(&mcp.Tool{Name: "hang", Description: "Never answer.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {} // ignores cancellation too
	})
	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Exit mid-call.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	srv.AddTool(&mcp.Tool{Name: "garbage", Description: "Write garbage on stdout.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Stdout.WriteString("}{ not JSON-RPC\n")
		select {}
	})
	srv.AddTool(&mcp.Tool{Name: "header", Description: "The value of an HTTP request header.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		json.Unmarshal(req.Params.Arguments, &in)
		if req.Extra == nil || req.Extra.Header == nil {
			return text("not over HTTP"), nil
		}
		return text(fmt.Sprintf("%s: %s", in.Name, req.Extra.Header.Get(in.Name))), nil
	})
	srv.AddTool(&mcp.Tool{Name: "block", Description: "Wait until the call is cancelled.", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rec("block started")
		<-ctx.Done()
		return nil, ctx.Err()
	})
	srv.AddTool(&mcp.Tool{Name: "big", Description: "A text of n bytes.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		json.Unmarshal(req.Params.Arguments, &in)
		return text(strings.Repeat("x", in.N)), nil
	})
	srv.AddTool(&mcp.Tool{Name: "many", Description: "n texts of size bytes each.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}, "size": map[string]any{"type": "integer"}}, "required": []string{"n", "size"},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ N, Size int }
		json.Unmarshal(req.Params.Arguments, &in)
		one := &mcp.TextContent{Text: strings.Repeat("m", in.Size)}
		r := &mcp.CallToolResult{}
		for range in.N {
			r.Content = append(r.Content, one)
		}
		return r, nil
	})
	srv.AddTool(&mcp.Tool{Name: "drop", Description: "Over HTTP: no answer, the connection is closed.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("not over HTTP"), nil
	})
	// ask and roots ask the client through multi round-trip requests: the
	// call's result names what the server needs, and the client calls
	// again with the answers.
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "Ask the user for a colour (elicitation) and say the answer.", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult); ok {
			b, _ := json.Marshal(r.Content)
			return text(fmt.Sprintf("action=%s content=%s", r.Action, b)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{
			Mode:    "form",
			Message: "Which colour? " + Hostile,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"colour": map[string]any{"type": "string", "description": "a colour", "default": "blue"},
				"count":  map[string]any{"type": "integer", "description": "how many"},
			}},
		}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", Description: "The client's roots.", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["r"].(*mcp.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return text(fmt.Sprintf("roots (%d): %s", len(uris), strings.Join(uris, " "))), nil
		}
		if req.Session.InitializeParams() == nil || req.Session.InitializeParams().Capabilities == nil || req.Session.InitializeParams().Capabilities.RootsV2 == nil {
			return text("roots: the client has no roots capability"), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "Ask the client's model to summarise a text (sampling).", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["s"].(*mcp.CreateMessageWithToolsResult); ok {
			var t *mcp.TextContent
			if len(r.Content) == 1 {
				t, _ = r.Content[0].(*mcp.TextContent)
			}
			if t == nil {
				return text("sampled: not one text"), nil
			}
			return text(fmt.Sprintf("sampled: %s (model %s)", t.Text, r.Model)), nil
		}
		if req.Session.InitializeParams() == nil || req.Session.InitializeParams().Capabilities == nil || req.Session.InitializeParams().Capabilities.Sampling == nil {
			r := text("sample: the client has no sampling capability")
			r.IsError = true
			return r, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{
			MaxTokens:    100,
			SystemPrompt: "You summarise.",
			Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarise: the quick brown fox jumps over the lazy dog."}}},
		}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "swap", Description: "Replace the tool echo by echo2 (the client is told its tools changed), and wait (at most 5s) until the client lists them again.", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-listed:
		default:
		}
		srv.RemoveTools("echo")
		srv.AddTool(&mcp.Tool{Name: "echo2", Description: "Echo text.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("echo2"), nil
		})
		select {
		case <-listed:
			return text("swapped; the client listed the tools again"), nil
		case <-time.After(5 * time.Second):
			return text("swapped; the client did not list the tools again within 5s"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	var gmu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "gather", Description: "Wait until n calls of gather are in flight at once.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"},
	}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		json.Unmarshal(req.Params.Arguments, &in)
		gmu.Lock()
		arrived++
		me := arrived
		if arrived == in.N {
			close(all)
		}
		gmu.Unlock()
		rec(fmt.Sprintf("gather %d of %d in flight", me, in.N))
		select {
		case <-all:
			return text(fmt.Sprintf("gather: all %d calls were in flight together", in.N)), nil
		case <-time.After(5 * time.Second):
			gmu.Lock()
			n := arrived
			gmu.Unlock()
			r := text(fmt.Sprintf("gather: only %d of %d calls in flight after 5s", n, in.N))
			r.IsError = true
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	readOnly := true
	srv.AddTool(&mcp.Tool{Name: "weather", Description: "The weather in a city, as structured content.",
		Annotations: &mcp.ToolAnnotations{Title: "Weather", ReadOnlyHint: true, OpenWorldHint: &readOnly},
		InputSchema: obj,
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"city": map[string]any{"type": "string"}, "celsius": map[string]any{"type": "number"},
		}, "required": []string{"city", "celsius"}},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text(`{"celsius":21.5,"city":"Lyon"}`)
		r.StructuredContent = map[string]any{"city": "Lyon", "celsius": 21.5}
		return r, nil
	})
	return srv
}

// Hostile is text a hostile server puts in what it says: an OSC that sets
// the terminal's title, a CSI that clears the screen, the C1 form of CSI
// (U+009B), a DCS (U+0090), a lone carriage return and a BEL.
const Hostile = "\x1b]0;pwned\x07 \x1b[2J \u009b31m \u0090dcs over\rwrite \a"

// hostileServer offers tools whose names, descriptions and results carry
// Hostile: "evil" plus Hostile (not a valid tool name), "ok" (a valid name,
// a hostile description; its call is an error result quoting Hostile) and
// "proto" (its call fails with a protocol error quoting Hostile).
func hostileServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile " + Hostile, Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: "evil" + Hostile, Description: "Evil " + Hostile, InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "evil " + Hostile}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "ok", Description: "Fine " + Hostile, InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "bad " + Hostile}}, IsError: true}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "proto", Description: "Fails " + Hostile, InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: "proto " + Hostile}
	})
	return srv
}

var recordMu sync.Mutex

// appendLine appends line to the file record ("" records nothing).
func appendLine(record, line string) {
	if record == "" {
		return
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	f, err := os.OpenFile(record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcptest: record: %v\n", err)
		return
	}
	defer f.Close()
	f.WriteString(line + "\n")
}
