package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

// The tests of `agenthost mcp serve --http` against hostile and careless
// clients: each runs the real command (this test binary, put in $PATH by
// testscript.Main) and speaks raw HTTP to it on loopback.

const serveToken = "s3cret-token"

// servedMCP is a running `agenthost mcp serve --http 127.0.0.1:0`.
type servedMCP struct {
	url  string // http://127.0.0.1:PORT/mcp
	addr string // 127.0.0.1:PORT
	logs chan string
}

// startServe runs `agenthost mcp serve --agents --http 127.0.0.1:0
// --token-env MCP_TOKEN ARGS...` on a config with one agent whose model
// is at modelURL, and waits until it serves. It is stopped (SIGINT) at the
// end of the test.
func startServe(t *testing.T, modelURL string, args ...string) *servedMCP {
	t.Helper()
	agenthost, err := exec.LookPath("agenthost")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	writeFile(t, filepath.Join(work, "agents.hcl"), `provider "fake" {
  base_url = env("OPENAI_BASE_URL")
}
model "m" {
  provider = "fake"
  name     = "fake-model"
}
agent "main" {
  model = "m"
  steps = 5
}
`)
	cmd := exec.Command(agenthost, append([]string{"mcp", "serve", "--agents", "--http", "127.0.0.1:0", "--token-env", "MCP_TOKEN"}, args...)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+modelURL, "MCP_TOKEN="+serveToken, "NO_COLOR=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	logs := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case logs <- sc.Text():
			default: // a test that reads no more logs
			}
		}
		close(logs)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	s := &servedMCP{logs: logs}
	line := s.waitLog(t, `"message":"serving MCP over HTTP"`, 60*time.Second)
	m := regexp.MustCompile(`"url":"(http://([^"/]+)/mcp)"`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no URL in %s", line)
	}
	s.url, s.addr = m[1], m[2]
	return s
}

// waitLog waits for the next log line that matches the regular
// expression want and returns it.
func (s *servedMCP) waitLog(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	re := regexp.MustCompile(want)
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.logs:
			if !ok {
				t.Fatalf("agenthost mcp serve exited before logging %s", want)
			}
			if re.MatchString(line) {
				return line
			}
		case <-deadline:
			t.Fatalf("agenthost mcp serve did not log %s within %s", want, timeout)
		}
	}
}

// dial opens a raw connection to the server.
func (s *servedMCP) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// client connects an MCP client with the token and returns its session.
func (s *servedMCP) client(ctx context.Context, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: bearerTransport{token: serveToken}}
	t := &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc, MaxRetries: -1}
	return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx, t, nil)
}

// readAnswer reads the status line and the rest of what the server sends
// until it closes the connection, all within timeout: a server that holds
// the connection fails the test.
func readAnswer(t *testing.T, c net.Conn, timeout time.Duration) (status, rest string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(timeout))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server held the connection for %s: it sent %q and did not close it", timeout, b)
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading the answer: %v (after %q)", err, b)
	}
	status, rest, _ = strings.Cut(string(b), "\r\n")
	return status, rest
}

// TestMCPHTTPRefusesBeforeBody: a request that is refused (no token, a
// wrong one, a foreign Host, a cross-origin browser request) is answered
// at once from its headers and its connection closed, although its body
// has only begun: the client cannot hold the connection by never sending
// the rest.
func TestMCPHTTPRefusesBeforeBody(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1")
	for _, c := range []struct {
		name, headers, status string
	}{
		{"no token", "Host: " + s.addr + "\r\n", "HTTP/1.1 401 "},
		{"wrong token", "Host: " + s.addr + "\r\nAuthorization: Bearer guess\r\n", "HTTP/1.1 401 "},
		{"foreign Host", "Host: evil.example\r\nAuthorization: Bearer " + serveToken + "\r\n", "HTTP/1.1 403 "},
		{"cross-origin", "Host: " + s.addr + "\r\nAuthorization: Bearer " + serveToken + "\r\nSec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n", "HTTP/1.1 403 "},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := s.dial(t)
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", c.headers)
			status, _ := readAnswer(t, conn, 5*time.Second)
			if !strings.HasPrefix(status, c.status) {
				t.Errorf("status %q, want %q", status, c.status)
			}
		})
	}
}

// TestMCPHTTPSlowClients: with --read-timeout 500ms, a client that never
// ends its headers is cut, one that sends part of its body (with the
// token) gets 408 and is cut, and headers over 64 KiB get 431.
func TestMCPHTTPSlowClients(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1", "--read-timeout", "500ms")
	auth := "Authorization: Bearer " + serveToken + "\r\n"

	conn := s.dial(t)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%s", s.addr, auth)
	readAnswer(t, conn, 10*time.Second)

	conn = s.dial(t)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", s.addr, auth)
	if status, rest := readAnswer(t, conn, 10*time.Second); !strings.HasPrefix(status, "HTTP/1.1 408 ") || !strings.Contains(rest, "request body not received within 500ms") {
		t.Errorf("a partial body: %q %q, want 408", status, rest)
	}

	conn = s.dial(t)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%sX-Big: %s\r\nContent-Length: 0\r\n\r\n", s.addr, auth, strings.Repeat("a", 80<<10))
	if status, _ := readAnswer(t, conn, 10*time.Second); !strings.HasPrefix(status, "HTTP/1.1 431 ") {
		t.Errorf("80 KiB of headers: %q, want 431", status)
	}
}

// TestMCPHTTPConnLimit: with --max-conns 8, eight connections that send
// nothing take every slot: a ninth is answered 503 at once, and so is the
// real client; once the read timeout has cut the eight, the real client
// is served (it opens up to four connections as it starts).
func TestMCPHTTPConnLimit(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1", "--max-conns", "8", "--read-timeout", "3s")
	var holders []net.Conn
	for range 8 {
		holders = append(holders, s.dial(t))
	}
	status, rest := readAnswer(t, s.dial(t), 5*time.Second)
	if !strings.HasPrefix(status, "HTTP/1.1 503 ") || !strings.Contains(rest, "too many connections (--max-conns 8)") {
		t.Fatalf("a ninth connection: %q %q, want 503", status, rest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cs, err := s.client(ctx, nil); err == nil {
		cs.Close()
		t.Fatal("the client connected with every connection slot taken")
	} else if !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("the client with every slot taken: %v, want 503 Service Unavailable", err)
	}
	s.waitLog(t, `"message":"refusing connections: at --max-conns"`, 5*time.Second)
	for _, h := range holders {
		readAnswer(t, h, 15*time.Second)
	}
	cs, err := s.client(ctx, nil)
	if err != nil {
		t.Fatalf("the client once the idle connections were cut: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
}

// TestMCPHTTPSessionLimit: with --max-sessions 2, a third session is
// refused with a message naming the flag; once a client ends its session
// (DELETE), a new one is accepted.
func TestMCPHTTPSessionLimit(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1", "--max-sessions", "2", "--session-timeout", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var open []*mcp.ClientSession
	for i := range 2 {
		cs, err := s.client(ctx, nil)
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		defer cs.Close()
		open = append(open, cs)
		s.waitLog(t, fmt.Sprintf(`"sessions":%d,.*"message":"MCP session opened"`, i+1), 10*time.Second)
	}
	if cs, err := s.client(ctx, nil); err == nil {
		cs.Close()
		t.Fatal("a third session was opened with --max-sessions 2")
	} else if !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a third session: %v, want 503 Service Unavailable", err)
	}
	conn := s.dial(t)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", s.addr, serveToken, len(initialize), initialize)
	if status, rest := readAnswer(t, conn, 5*time.Second); !strings.HasPrefix(status, "HTTP/1.1 503 ") || !strings.Contains(rest, "too many MCP sessions: 2 are open (--max-sessions 2)") {
		t.Errorf("a third session: %q %q, want 503 naming --max-sessions", status, rest)
	}
	s.waitLog(t, `"message":"new MCP session refused: at --max-sessions"`, 5*time.Second)
	open[0].Close() // DELETE
	s.waitLog(t, `"sessions":1,.*"message":"MCP session closed"`, 10*time.Second)
	cs, err := s.client(ctx, nil)
	if err != nil {
		t.Fatalf("a session once one was closed: %v", err)
	}
	defer cs.Close()
	if _, err := open[1].ListTools(ctx, nil); err != nil {
		t.Errorf("the second session after the first closed: %v", err)
	}
}

// TestMCPHTTPSessionLimitAnyBody: with --max-sessions 3, no request body
// opens a fourth session. Initialize requests that another JSON parser
// reads otherwise than the SDK (the method's key in other cases, escaped,
// given twice or with a number; trailing data; a second object; batches)
// are sent many times each, eight at once, beside plain ones: of all the
// session ids answered, at most 3 ever serve tools/list. A real client is
// then refused (503) only because 3 sessions work, and served once one of
// them ends.
func TestMCPHTTPSessionLimitAnyBody(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1", "--max-sessions", "3", "--session-timeout", "0")
	const params = `"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize",` + params + `}`
	variants := []struct{ name, body string }{
		{"plain", init},
		{"Method ping", `{"jsonrpc":"2.0","id":1,"method":"initialize","Method":"ping",` + params + `}`},
		{"METHOD ping", `{"jsonrpc":"2.0","id":1,"method":"initialize","METHOD":"ping",` + params + `}`},
		{"escaped Method", `{"jsonrpc":"2.0","id":1,"method":"initialize","\u004dethod":"ping",` + params + `}`},
		{"numeric Method", `{"jsonrpc":"2.0","id":1,"method":"initialize","Method":1,` + params + `}`},
		{"trailing data", init + ` trailing`},
		{"second object", init + `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"batch of one", `[` + init + `]`},
		{"batch with ping", `[` + init + `,{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
		{"method twice, initialize last", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize",` + params + `}`},
		{"method twice, initialize first", `{"jsonrpc":"2.0","id":1,"method":"initialize","method":"ping",` + params + `}`},
	}
	hc := &http.Client{Transport: bearerTransport{token: serveToken}, Timeout: 30 * time.Second}
	post := func(session, body string) (int, string, string, error) {
		req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
		if err != nil {
			return 0, "", "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
	}
	works := func(session string) bool {
		status, _, body, err := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		return err == nil && status == http.StatusOK && strings.Contains(body, `"tools"`)
	}

	// Every variant 15 times, eight requests at once.
	type sent struct{ variant, session string }
	jobs := make(chan string)
	results := make(chan sent)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range jobs {
				var body string
				for _, c := range variants {
					if c.name == v {
						body = c.body
					}
				}
				status, session, _, err := post("", body)
				if err != nil {
					t.Errorf("%s: %v", v, err)
					continue
				}
				if status == http.StatusOK && session != "" {
					results <- sent{v, session}
				}
			}
		}()
	}
	go func() {
		for range 15 {
			for _, c := range variants {
				jobs <- c.name
			}
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var ids []sent
	for r := range results {
		ids = append(ids, r)
	}
	var working []string
	byVariant := map[string]int{}
	for _, id := range ids {
		if works(id.session) {
			working = append(working, id.session)
			byVariant[id.variant]++
		}
	}
	t.Logf("%d session ids answered, %d serve tools/list, by variant: %v", len(ids), len(working), byVariant)
	if len(working) > 3 {
		t.Fatalf("%d sessions serve tools/list with --max-sessions 3 (of %d session ids answered), by variant: %v", len(working), len(ids), byVariant)
	}

	// A real client is served while fewer than 3 sessions work, then
	// refused because 3 do.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(working) < 3 {
		cs, err := s.client(ctx, nil)
		if err != nil {
			t.Fatalf("a client with %d sessions working: %v", len(working), err)
		}
		defer cs.Close()
		working = append(working, cs.ID())
	}
	status, _, body, err := post("", init)
	if err != nil || status != http.StatusServiceUnavailable || !strings.Contains(body, "too many MCP sessions: 3 are open (--max-sessions 3)") {
		t.Fatalf("an initialize with 3 sessions working: %d %q %v, want 503 naming --max-sessions", status, body, err)
	}
	if cs, err := s.client(ctx, nil); err == nil {
		cs.Close()
		t.Fatal("a client connected with 3 sessions working")
	}
	for _, id := range working {
		if !works(id) {
			t.Errorf("session %s stopped working", id)
		}
	}
	// One ends (DELETE): the next client is served.
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header.Set("Mcp-Session-Id", working[0])
	if resp, err := hc.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	s.waitLog(t, `"sessions":2,.*"message":"MCP session closed"`, 10*time.Second)
	cs, err := s.client(ctx, nil)
	if err != nil {
		t.Fatalf("a client once a session ended: %v", err)
	}
	defer cs.Close()
}

// TestMCPHTTPSessionExpiry: with --session-timeout 500ms, a session that
// makes no request is closed (the log counts the sessions left), its
// client's next request fails, and the slot it held (--max-sessions 1) is
// free for a new session.
func TestMCPHTTPSessionExpiry(t *testing.T) {
	s := startServe(t, "http://127.0.0.1:1/v1", "--max-sessions", "1", "--session-timeout", "500ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idle, err := s.client(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	s.waitLog(t, `"sessions":1,.*"message":"MCP session opened"`, 10*time.Second)
	s.waitLog(t, `"sessions":0,.*"message":"MCP session closed"`, 10*time.Second)
	if _, err := idle.ListTools(ctx, nil); err == nil {
		t.Error("the expired session still answers")
	}
	cs, err := s.client(ctx, nil)
	if err != nil {
		t.Fatalf("a new session once the idle one expired: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
}

// TestMCPHTTPDeleteForeignHost: a DELETE of a session with a foreign Host
// header (DNS rebinding) is refused (403) and cancels nothing: the
// session's served agent run goes on and completes.
func TestMCPHTTPDeleteForeignHost(t *testing.T) {
	replies, err := fakemodel.ParseScript([]byte(`{"text": "Finished anyway.", "hold": true}`))
	if err != nil {
		t.Fatal(err)
	}
	fm, err := fakemodel.Start(replies)
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	s := startServe(t, fm.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	progress := make(chan struct{}, 10)
	cs, err := s.client(ctx, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "main", Arguments: json.RawMessage(`{"prompt":"Hold on."}`)}
		params.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, params)
		done <- outcome{res, err}
	}()
	select {
	case <-progress: // the run has started its first step
	case <-ctx.Done():
		t.Fatal("no progress notification from the served agent")
	}

	conn := s.dial(t)
	fmt.Fprintf(conn, "DELETE /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\n\r\n", serveToken, cs.ID())
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.HasPrefix(status, "HTTP/1.1 403 ") {
		t.Fatalf("DELETE with a foreign Host: %q, %v; want 403", status, err)
	}
	fm.Release()
	o := <-done
	if o.err != nil {
		t.Fatalf("the call: %v", o.err)
	}
	sc, _ := json.Marshal(o.res.StructuredContent)
	if o.res.IsError || !strings.Contains(string(sc), `"stop_reason":"completed"`) {
		t.Fatalf("the run was not left alone: isError=%v %s", o.res.IsError, sc)
	}
}
