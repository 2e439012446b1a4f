package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClientMain is mcpclient, a test-only program the scripts run: an MCP
// client made with the official Go SDK that connects to a server and runs
// operations in order, printing what it got on stdout.
//
//	mcpclient [-http URL | -url-from LOG] [-token-env VAR] [-timeout D] [-elicit ANSWERS] [-sample FILE | -sample-text FILE] [-protocol V] OP... [-- SERVER ARGS...]
//
// With -http it connects to URL (-url-from: the URL that 'agenthost mcp
// serve --http' logged in LOG) (streamable HTTP; with -token-env, sending
// "Authorization: Bearer $VAR"), else it starts SERVER ARGS... and speaks
// over its stdin and stdout. Operations:
//
//	list                     print each tool: "tool NAME: DESCRIPTION" and its input schema
//	outputs                  print each tool's output schema: "tool NAME output SCHEMA"
//	call TOOL JSON           call TOOL; print the result (see printResult)
//	progress TOOL JSON       the same with a progress token; print each notification
//	parallel N TOOL JSON     N concurrent calls of TOOL; print each result, sorted
//	cancel TOOL JSON         call TOOL with a progress token and cancel the call at
//	                         its first progress notification; print "cancelled"
//	changed                  wait for a notifications/tools/list_changed not waited for
//	                         yet; print "tools changed"
//	changed-resources        the same for resources/list_changed: "resources changed"
//	changed-prompts          the same for prompts/list_changed: "prompts changed"
//	resources                print each resource: "resource URI: NAME"
//	prompts                  print each prompt: "prompt NAME"
//	subscribe URI            subscribe to the resource URI
//	updated                  wait for a notifications/resources/updated not waited for
//	                         yet; print "updated URI"
//	leave TOOL JSON          (-http) call TOOL with a progress token and, at its first
//	                         progress notification, end the session with an HTTP DELETE
//	                         without cancelling the call; print "left" and the call's
//	                         outcome, and stop
//	wait progress|logs N     wait until N progress notifications (of the calls above)
//	                         or N log messages in all have been printed
//
// The SDK hands notifications to their handlers in order, but apart from
// results, so a call's notifications may be printed after its result;
// wait is how a script knows they all were.
//
// With -elicit the client declares the elicitation capability and answers
// each elicitation with the next of ANSWERS (comma-separated): allow,
// always, deny, deny:REASON (a form accepted with that decision), accept
// (accepted with -content's JSON object), big (accepted with a 70000-byte
// string in field colour), nested (accepted with an object in field
// extra), or decline; it prints "elicit: " and the request's first line,
// and "elicit params: " and the request's parameters as JSON. Past the
// list it declines.
//
// With -sample the client declares sampling with tools (sampling.tools),
// with -sample-text sampling without tools, and answers each
// sampling/createMessage request with the next line of FILE, a JSON
// object: {"text": T} (an end of turn), {"tool_use": [{"name": N,
// "input": {...}}, ...]} (with "text" too if wanted), or {"error": E} (the
// request fails). It prints one line per request (see printSample). Past
// the file's end the request fails.
//
// The exit code is 0 when every operation got an answer (error results
// included), 1 otherwise (the error on stderr).
func mcpClientMain() int {
	fs := flag.NewFlagSet("mcpclient", flag.ContinueOnError)
	httpURL := fs.String("http", "", "connect to this streamable HTTP `url`")
	urlFrom := fs.String("url-from", "", "connect to the URL that 'agenthost mcp serve --http' logged in this `file`")
	tokenEnv := fs.String("token-env", "", "send the bearer token in this environment `variable`")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this `duration`")
	elicit := fs.String("elicit", "", "answer elicitations with these comma-separated `answers`")
	content := fs.String("content", "{}", "the `JSON` object an accept answer carries")
	sample := fs.String("sample", "", "answer sampling requests (with tools) with the lines of this `file`")
	sampleText := fs.String("sample-text", "", "answer sampling requests (without tools) with the lines of this `file`")
	fs.StringVar(&protocolVersion, "protocol", "", "ask for this protocol `version` (default: the SDK's latest)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *urlFrom != "" {
		b, err := os.ReadFile(*urlFrom)
		m := regexp.MustCompile(`"url":"(http://[^"]+)"`).FindSubmatch(b)
		if err != nil || m == nil {
			fmt.Fprintf(os.Stderr, "mcpclient: no URL logged in %s (%v)\n", *urlFrom, err)
			return 1
		}
		*httpURL = string(m[1])
	}
	args := fs.Args()
	var server []string
	for i, a := range args {
		if a == "--" {
			args, server = args[:i], args[i+1:]
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if *elicit != "" {
		elicitAnswers = strings.Split(*elicit, ",")
	}
	if err := json.Unmarshal([]byte(*content), &elicitContent); err != nil {
		fmt.Fprintf(os.Stderr, "mcpclient: -content: %v\n", err)
		return 2
	}
	for _, f := range []string{*sample, *sampleText} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcpclient: %v\n", err)
			return 1
		}
		sampleAnswers = strings.Split(strings.TrimSpace(string(b)), "\n")
		sampleTools = f == *sample
	}
	if err := mcpClientRun(ctx, *httpURL, *tokenEnv, args, server); err != nil {
		fmt.Fprintf(os.Stderr, "mcpclient: %v\n", err)
		return 1
	}
	return 0
}

// progressFns routes progress notifications to the call that asked for
// them, by token.
var progressFns sync.Map // token string → func(*mcp.ProgressNotificationParams)

// toolsChanged, resourcesChanged and promptsChanged take one value per
// notifications/*/list_changed, updated the URI of each
// notifications/resources/updated.
var (
	toolsChanged     = make(chan struct{}, 100)
	resourcesChanged = make(chan struct{}, 100)
	promptsChanged   = make(chan struct{}, 100)
	updated          = make(chan string, 100)
)

// note sends v on c unless c is full.
func note[T any](c chan T, v T) {
	select {
	case c <- v:
	default:
	}
}

// await waits for a value on c and prints it with f, or fails when ctx
// ends first.
func await[T any](ctx context.Context, c chan T, what string, f func(T)) error {
	select {
	case v := <-c:
		f(v)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no %s came: %w", what, ctx.Err())
	}
}

// seen counts the progress notifications and log messages printed, for
// wait; changed is closed and replaced at each one.
var seen = struct {
	sync.Mutex
	progress, logs int
	changed        chan struct{}
}{changed: make(chan struct{})}

// printed counts a progress notification (or a log message) printed.
func printed(progress bool) {
	seen.Lock()
	defer seen.Unlock()
	if progress {
		seen.progress++
	} else {
		seen.logs++
	}
	close(seen.changed)
	seen.changed = make(chan struct{})
}

// waitPrinted waits until n progress notifications (or log messages) have
// been printed.
func waitPrinted(ctx context.Context, progress bool, n int) error {
	for {
		seen.Lock()
		got, changed := seen.logs, seen.changed
		if progress {
			got = seen.progress
		}
		seen.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("wait: %d printed, waiting for %d: %w", got, n, ctx.Err())
		}
	}
}

// protocolVersion is -protocol: the version the client asks for.
var protocolVersion string

// elicitAnswers are -elicit's answers, taken in order.
var (
	elicitMu      sync.Mutex
	elicitAnswers []string
	elicitContent map[string]any // -content
)

// sampleAnswers are the lines of -sample's (sampleTools) or -sample-text's
// file, taken in order.
var (
	sampleMu      sync.Mutex
	sampleAnswers []string
	sampleTools   bool
)

// answerSample answers one sampling request with the next of
// sampleAnswers, after printing it (printSample).
func answerSample(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	sampleMu.Lock()
	defer sampleMu.Unlock()
	printSample(req.Params)
	if len(sampleAnswers) == 0 {
		return nil, fmt.Errorf("mcpclient has no more sampling answers")
	}
	line := sampleAnswers[0]
	sampleAnswers = sampleAnswers[1:]
	var a struct {
		Text    string `json:"text"`
		Error   string `json:"error"`
		ToolUse []struct {
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"tool_use"`
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		return nil, fmt.Errorf("mcpclient: sampling answer %q: %v", line, err)
	}
	if a.Error != "" {
		return nil, errors.New(a.Error)
	}
	res := &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "client-model", StopReason: "endTurn"}
	if a.Text != "" || len(a.ToolUse) == 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: a.Text})
	}
	for i, tu := range a.ToolUse {
		res.Content = append(res.Content, &mcp.ToolUseContent{ID: fmt.Sprintf("tu%d", i+1), Name: tu.Name, Input: tu.Input})
		res.StopReason = "toolUse"
	}
	return res, nil
}

// printSample prints a sampling request as one line: "sample:", the
// tools offered ("-" for none), the tool choice when set, the model hint,
// maxTokens, and each message as ROLE:KINDS (KINDS: its content types,
// joined by "+"; a tool_result that reports an error is tool_error).
func printSample(p *mcp.CreateMessageWithToolsParams) {
	var tools []string
	for _, t := range p.Tools {
		tools = append(tools, t.Name)
	}
	if tools == nil {
		tools = []string{"-"}
	}
	line := "sample: tools " + strings.Join(tools, ",")
	if p.ToolChoice != nil {
		line += "; choice " + p.ToolChoice.Mode
	}
	if p.ModelPreferences != nil && len(p.ModelPreferences.Hints) > 0 {
		line += "; hint " + p.ModelPreferences.Hints[0].Name
	}
	line += fmt.Sprintf("; max %d;", p.MaxTokens)
	for _, m := range p.Messages {
		var kinds []string
		for _, c := range m.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				kinds = append(kinds, "text")
			case *mcp.ToolUseContent:
				kinds = append(kinds, "tool_use")
			case *mcp.ToolResultContent:
				if c.IsError {
					kinds = append(kinds, "tool_error")
				} else {
					kinds = append(kinds, "tool_result")
				}
			default:
				kinds = append(kinds, fmt.Sprintf("%T", c))
			}
		}
		line += fmt.Sprintf(" %s:%s", m.Role, strings.Join(kinds, "+"))
	}
	fmt.Println(line)
}

// answerElicit answers one elicitation with the next of elicitAnswers.
func answerElicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	elicitMu.Lock()
	defer elicitMu.Unlock()
	first, _, _ := strings.Cut(req.Params.Message, "\n")
	fmt.Printf("elicit: %s\n", first)
	params, _ := json.Marshal(req.Params)
	fmt.Printf("elicit params: %s\n", params)
	if len(elicitAnswers) == 0 {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	a := elicitAnswers[0]
	elicitAnswers = elicitAnswers[1:]
	switch a {
	case "decline":
		return &mcp.ElicitResult{Action: "decline"}, nil
	case "accept":
		return &mcp.ElicitResult{Action: "accept", Content: elicitContent}, nil
	case "big":
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": strings.Repeat("x", 70000)}}, nil
	case "nested":
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": "red", "extra": map[string]any{"a": 1}}}, nil
	}
	decision, reason, _ := strings.Cut(a, ":")
	content := map[string]any{"decision": decision}
	if reason != "" {
		content["reason"] = reason
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

func mcpClientRun(ctx context.Context, httpURL, tokenEnv string, ops, server []string) error {
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if f, ok := progressFns.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
				f.(func(*mcp.ProgressNotificationParams))(req.Params)
			}
		},
	}
	if elicitAnswers != nil {
		opts.ElicitationHandler = answerElicit
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { note(toolsChanged, struct{}{}) }
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { note(resourcesChanged, struct{}{}) }
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { note(promptsChanged, struct{}{}) }
	opts.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { note(updated, req.Params.URI) }
	switch {
	case sampleAnswers != nil && sampleTools:
		opts.CreateMessageWithToolsHandler = answerSample
	case sampleAnswers != nil:
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			p := &mcp.CreateMessageWithToolsParams{MaxTokens: req.Params.MaxTokens, ModelPreferences: req.Params.ModelPreferences}
			for _, m := range req.Params.Messages {
				p.Messages = append(p.Messages, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
			}
			res, err := answerSample(ctx, &mcp.CreateMessageWithToolsRequest{Params: p})
			if err != nil {
				return nil, err
			}
			if len(res.Content) != 1 {
				return nil, fmt.Errorf("mcpclient: -sample-text answers hold one text block")
			}
			return &mcp.CreateMessageResult{Role: res.Role, Model: res.Model, StopReason: res.StopReason, Content: res.Content[0]}, nil
		}
	}
	opts.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
		d, _ := json.Marshal(req.Params.Data)
		fmt.Printf("log %s %s: %s\n", req.Params.Level, req.Params.Logger, d)
		printed(false)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpclient", Version: "test"}, opts)
	var t mcp.Transport
	hc := &http.Client{}
	switch {
	case httpURL != "":
		if tokenEnv != "" {
			hc.Transport = bearerTransport{token: os.Getenv(tokenEnv)}
		}
		t = &mcp.StreamableClientTransport{Endpoint: httpURL, HTTPClient: hc, MaxRetries: -1}
	case len(server) > 0:
		cmd := exec.Command(server[0], server[1:]...)
		cmd.Stderr = os.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	default:
		return fmt.Errorf("no server: pass -http URL or -- COMMAND ARGS...")
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	next := func(n int) ([]string, error) {
		if len(ops) < n {
			return nil, fmt.Errorf("operation needs %d arguments, got %q", n, ops)
		}
		a := ops[:n]
		ops = ops[n:]
		return a, nil
	}
	token := 0
	logLevel := "" // set by loglevel
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		switch op {
		case "list":
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			for _, tl := range res.Tools {
				schema, _ := json.Marshal(tl.InputSchema)
				fmt.Printf("tool %s: %s\n  input %s\n", tl.Name, firstLine(tl.Description), schema)
			}
		case "changed", "changed-resources", "changed-prompts":
			c, what := toolsChanged, "tools"
			switch op {
			case "changed-resources":
				c, what = resourcesChanged, "resources"
			case "changed-prompts":
				c, what = promptsChanged, "prompts"
			}
			if err := await(ctx, c, "notifications/"+what+"/list_changed", func(struct{}) { fmt.Println(what, "changed") }); err != nil {
				return err
			}
		case "updated":
			if err := await(ctx, updated, "notifications/resources/updated", func(uri string) { fmt.Println("updated", uri) }); err != nil {
				return err
			}
		case "resources":
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				return fmt.Errorf("resources/list: %w", err)
			}
			for _, r := range res.Resources {
				fmt.Printf("resource %s: %s\n", r.URI, r.Name)
			}
		case "prompts":
			res, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				return fmt.Errorf("prompts/list: %w", err)
			}
			for _, p := range res.Prompts {
				fmt.Printf("prompt %s\n", p.Name)
			}
		case "subscribe":
			a, err := next(1)
			if err != nil {
				return err
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: a[0]}); err != nil {
				return fmt.Errorf("resources/subscribe: %w", err)
			}
		case "outputs":
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			for _, tl := range res.Tools {
				out, _ := json.Marshal(tl.OutputSchema)
				fmt.Printf("tool %s output %s\n", tl.Name, out)
			}
		case "loglevel":
			a, err := next(1)
			if err != nil {
				return err
			}
			// From protocol 2026-07-28 on the level travels with each
			// request (its _meta); before, logging/setLevel sets it.
			logLevel = a[0]
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(a[0])}); err != nil && (protocolVersion != "" && protocolVersion < "2026-07-28") {
				return fmt.Errorf("logging/setLevel: %w", err)
			}
		case "annotations":
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			for _, tl := range res.Tools {
				a, _ := json.Marshal(tl.Annotations)
				fmt.Printf("tool %s annotations %s\n", tl.Name, a)
			}
		case "call", "progress", "cancel", "leave":
			a, err := next(2)
			if err != nil {
				return err
			}
			params := &mcp.CallToolParams{Name: a[0], Arguments: json.RawMessage(a[1])}
			if logLevel != "" {
				params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: logLevel}
			}
			cctx, ccancel := context.WithCancel(ctx)
			if op != "call" {
				token++
				tok := "p" + strconv.Itoa(token)
				params.SetProgressToken(tok)
				var once sync.Once
				progressFns.Store(tok, func(p *mcp.ProgressNotificationParams) {
					if op == "cancel" || op == "leave" {
						once.Do(func() {
							fmt.Printf("progress %g/%g %s\n", p.Progress, p.Total, p.Message)
							printed(true)
							if op == "cancel" {
								ccancel()
							} else {
								go deleteSession(httpURL, hc, cs.ID())
							}
						})
						return
					}
					fmt.Printf("progress %g/%g %s\n", p.Progress, p.Total, p.Message)
					printed(true)
				})
			}
			res, err := cs.CallTool(cctx, params)
			ccancel()
			if op == "leave" {
				fmt.Println("left")
				if err != nil {
					fmt.Printf("call ended: %v\n", err)
				} else {
					fmt.Print(formatResult(res))
				}
				return nil
			}
			if op == "cancel" {
				if err == nil {
					return fmt.Errorf("cancel %s: the call was not cancelled, it returned a result", a[0])
				}
				fmt.Println("cancelled")
				continue
			}
			if err != nil {
				return fmt.Errorf("tools/call %s: %w", a[0], err)
			}
			fmt.Print(formatResult(res))
		case "wait":
			a, err := next(2)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(a[1])
			if err != nil || (a[0] != "progress" && a[0] != "logs") {
				return fmt.Errorf("usage: wait progress|logs N, got %q", a)
			}
			if err := waitPrinted(ctx, a[0] == "progress", n); err != nil {
				return err
			}
		case "parallel":
			a, err := next(3)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(a[0])
			if err != nil {
				return fmt.Errorf("parallel N: %v", err)
			}
			outs := make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: a[1], Arguments: json.RawMessage(a[2])})
					if err != nil {
						errs[i] = err
						return
					}
					outs[i] = formatResult(res)
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return fmt.Errorf("parallel call of %s: %w", a[1], err)
				}
			}
			sort.Strings(outs)
			for _, o := range outs {
				fmt.Print(o)
			}
		default:
			return fmt.Errorf("unknown operation %q", op)
		}
	}
	return nil
}

// formatResult prints a result as "result isError=BOOL", a "text: " line
// per text content and "structured: JSON" when there is structured content.
func formatResult(res *mcp.CallToolResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "result isError=%v\n", res.IsError)
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintf(&b, "text: %s\n", strings.ReplaceAll(strings.TrimRight(tc.Text, "\n"), "\n", `\n`))
		} else {
			fmt.Fprintf(&b, "content: %T\n", c)
		}
	}
	if res.StructuredContent != nil {
		sc, _ := json.Marshal(res.StructuredContent)
		fmt.Fprintf(&b, "structured: %s\n", sc)
	}
	if run, ok := res.Meta["agenthost/run"]; ok {
		m, _ := json.Marshal(run)
		fmt.Fprintf(&b, "meta run: %s\n", m)
	}
	return b.String()
}

type bearerTransport struct{ token string }

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

// deleteSession ends the MCP session id as a client that leaves does:
// with an HTTP DELETE carrying its Mcp-Session-Id.
func deleteSession(url string, hc *http.Client, id string) {
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpclient: DELETE: %v\n", err)
		return
	}
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpclient: DELETE: %v\n", err)
		return
	}
	resp.Body.Close()
}
