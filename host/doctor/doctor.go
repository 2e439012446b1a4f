// Package doctor checks, before a run, that what an agent needs works: each
// provider and model the agents use (reachable, authenticated, the model
// known to the server, a completion, streaming, a tool call) and each
// plugin (loads, its kind, tools, grants and mounts). Every check says what
// it found, how long it took and, when it fails for a known cause, how to
// fix it. Everything printed is scrubbed of the credentials a base_url,
// api_key or header carries (internal/redact).
package doctor

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/provider"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// Status is the outcome of one check.
type Status string

// Outcomes. Skip is a check that could not or need not run (an IP address
// needs no DNS; a server without GET /models); it does not fail the report.
const (
	OK   Status = "ok"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail says what was found; Hint, for a failure of a known cause,
	// what to do.
	Detail string `json:"detail,omitempty"`
	Hint   string `json:"hint,omitempty"`
	// MS is the time the check took, in milliseconds (0: not timed).
	MS float64 `json:"ms,omitempty"`
}

// Model is the report on one model block and its provider.
type Model struct {
	Model    string  `json:"model"`
	ID       string  `json:"id"`
	Provider string  `json:"provider"`
	BaseURL  string  `json:"base_url"` // redacted
	Checks   []Check `json:"checks"`
}

// OK reports whether no check failed.
func (m Model) OK() bool { return allOK(m.Checks) }

func allOK(cs []Check) bool {
	for _, c := range cs {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// Timeout bounds each network check.
const Timeout = 30 * time.Second

// probe holds what one model's checks learn from each other.
type probe struct {
	p      *config.Provider
	m      *config.Model
	u      *url.URL
	scrub  *redact.Replacer
	client *http.Client
	checks []Check
	// models404 is set when GET /models answered 404: with a 404 on the
	// completion too, the base_url's path is wrong.
	models404 bool
}

func (pr *probe) add(c Check) *Check {
	c.Detail = pr.scrub.Replace(c.Detail)
	c.Hint = pr.scrub.Replace(c.Hint)
	pr.checks = append(pr.checks, c)
	return &pr.checks[len(pr.checks)-1]
}

func since(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// scrubber scrubs what doctor prints of provider p's answers and errors:
// the credentials of its base URL, its key, and every header value it
// sends (also without "Bearer "), whatever the header's name.
func scrubber(p *config.Provider) *redact.Replacer {
	secrets := append(redact.Secrets(p.BaseURL), p.APIKey)
	for _, v := range p.Headers {
		secrets = append(secrets, v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
	}
	return redact.NewReplacer(secrets...)
}

// CheckModel runs every check of model m served by provider p. A failure
// that makes the later checks pointless (no DNS, no connection) stops
// there.
func CheckModel(ctx context.Context, p *config.Provider, m *config.Model) Model {
	if m.Provider == config.ProviderMCPClient {
		return Model{Model: m.Name, ID: m.ID, Provider: m.Provider, Checks: []Check{{Name: "mcp_client", Status: Skip,
			Detail: "its requests go to the MCP client that calls the agent (sampling); there is nothing to reach from here"}}}
	}
	pr := &probe{p: p, m: m, scrub: scrubber(p), client: &http.Client{Timeout: Timeout}}
	rep := Model{Model: m.Name, ID: m.ID, Provider: p.Name, BaseURL: redact.URL(p.BaseURL)}
	u, err := url.Parse(p.BaseURL)
	if err != nil || u.Host == "" {
		pr.add(Check{Name: "base_url", Status: Fail, Detail: "base_url is not a URL", Hint: `write it like "http://127.0.0.1:11434/v1"`})
		rep.Checks = pr.checks
		return rep
	}
	pr.u = u
	if pr.reach(ctx) {
		pr.listModels(ctx)
		pr.complete(ctx)
	}
	rep.Checks = pr.checks
	return rep
}

// reach checks DNS, TCP and (for https) TLS, each timed.
func (pr *probe) reach(ctx context.Context) bool {
	host, port := hostPort(pr.u)
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	addr := host
	if net.ParseIP(host) != nil {
		pr.add(Check{Name: "dns", Status: Skip, Detail: host + " is an IP address"})
	} else {
		t := time.Now()
		addrs, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			pr.add(Check{Name: "dns", Status: Fail, Detail: err.Error(), MS: since(t), Hint: "check the host name in base_url"})
			return false
		}
		pr.add(Check{Name: "dns", Status: OK, Detail: host + " → " + strings.Join(addrs, ", "), MS: since(t)})
		addr = addrs[0]
	}
	t := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, port))
	if err != nil {
		pr.add(Check{Name: "tcp", Status: Fail, Detail: err.Error(), MS: since(t), Hint: listenHint(host, port)})
		return false
	}
	pr.add(Check{Name: "tcp", Status: OK, Detail: "connected to " + net.JoinHostPort(addr, port), MS: since(t)})
	defer conn.Close()
	if pr.u.Scheme != "https" {
		pr.add(Check{Name: "tls", Status: Skip, Detail: "plain http"})
		return true
	}
	t = time.Now()
	tc := tls.Client(conn, &tls.Config{ServerName: host})
	if err := tc.HandshakeContext(ctx); err != nil {
		hint := tlsHint(host)
		if plainHTTP(err) {
			hint = plainHTTPHint(pr.u)
		}
		pr.add(Check{Name: "tls", Status: Fail, Detail: err.Error(), MS: since(t), Hint: hint})
		return false
	}
	st := tc.ConnectionState()
	pr.add(Check{Name: "tls", Status: OK, Detail: tls.VersionName(st.Version), MS: since(t)})
	return true
}

// listModels asks GET /models whether the server knows the model.
func (pr *probe) listModels(ctx context.Context) {
	t := time.Now()
	ids, status, err := ListModels(ctx, pr.client, pr.p)
	ms := since(t)
	switch {
	case err != nil && status == 0:
		pr.add(Check{Name: "models", Status: Fail, Detail: err.Error(), MS: ms})
		return
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		pr.add(Check{Name: "auth", Status: Fail, Detail: fmt.Sprintf("GET /models answered %d", status), MS: ms, Hint: authHint(pr.p)})
		return
	case status == http.StatusNotFound:
		pr.models404 = true
		pr.add(Check{Name: "models", Status: Skip, Detail: "the server has no GET /models (404)", MS: ms})
		return
	case status != http.StatusOK:
		pr.add(Check{Name: "models", Status: Skip, Detail: fmt.Sprintf("GET /models answered %d", status), MS: ms})
		return
	case err != nil:
		pr.add(Check{Name: "models", Status: Skip, Detail: "GET /models did not answer a model list", MS: ms})
		return
	}
	if pr.p.APIKey != "" {
		pr.add(Check{Name: "auth", Status: OK, Detail: "api_key accepted"})
	}
	for _, id := range ids {
		if id == pr.m.ID {
			pr.add(Check{Name: "models", Status: OK, Detail: fmt.Sprintf("%q listed (%d %s)", pr.m.ID, len(ids), plural(len(ids), "model", "models")), MS: ms})
			return
		}
	}
	shown := ids
	if len(shown) > 10 {
		shown = append(shown[:10:10], "...")
	}
	pr.add(Check{Name: "models", Status: Fail, MS: ms,
		Detail: fmt.Sprintf("%q is not among the server's models: %s", pr.m.ID, strings.Join(shown, ", ")),
		Hint:   fmt.Sprintf("pull it (Ollama: ollama pull %s), or set the model block's name to one the server has", pr.m.ID)})
}

// ListModels asks the provider's GET /models for the ids of the models it
// serves, with the provider's key and headers. status is the HTTP status,
// 0 when no answer came (err says why); err is also set for a 200 whose
// body is not a model list. The body read is bounded (4 MiB).
func ListModels(ctx context.Context, client *http.Client, p *config.Provider) (ids []string, status int, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.BaseURL, "/")+"/models", nil)
	if err != nil {
		return nil, 0, err
	}
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("GET /models answered %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct { // Ollama's /api/tags shape, seen behind some proxies
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, resp.StatusCode, errors.New("GET /models did not answer a model list")
	}
	ids = []string{}
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	for _, d := range list.Models {
		ids = append(ids, d.Name)
	}
	return ids, resp.StatusCode, nil
}

// ListHint says what to do when ListModels failed with status (0: no
// answer) and err, where the cause is known; "" otherwise.
func ListHint(p *config.Provider, status int, err error) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return authHint(p)
	case status == http.StatusNotFound:
		return "nothing answers GET /models under this base_url: check that it is the API root (usually ending in /v1); some servers list no models at all"
	case status == 0 && err != nil:
		u, _ := url.Parse(p.BaseURL)
		if errors.Is(err, syscall.ECONNREFUSED) && u != nil {
			return listenHint(hostPort(u))
		}
		if plainHTTP(err) && u != nil {
			return plainHTTPHint(u)
		}
	}
	return ""
}

// complete sends a short completion (streamed, like every request of a
// run) and a request offering one trivial tool, through the provider
// client the runs use.
func (pr *probe) complete(ctx context.Context) {
	for _, c := range pr.checks {
		if c.Name == "auth" && c.Status == Fail {
			for _, n := range []string{"completion", "streaming", "tool call"} {
				pr.add(Check{Name: n, Status: Skip, Detail: "the key was refused"})
			}
			return
		}
	}
	model := provider.New(provider.Options{
		BaseURL:        pr.p.BaseURL,
		APIKey:         pr.p.APIKey,
		Headers:        pr.p.Headers,
		ModelID:        pr.m.ID,
		Temperature:    pr.m.Temperature,
		MaxTokens:      pr.m.MaxTokens,
		IdleTimeout:    Timeout,
		RequestTimeout: Timeout,
	})
	t := time.Now()
	var first float64
	req := loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "Reply with the single word OK."}}}
	resp, err := model.Stream(ctx, req, func(string) {
		if first == 0 {
			first = since(t)
		}
	})
	ms := since(t)
	if err != nil {
		pr.add(pr.failure("completion", err, ms))
		pr.add(Check{Name: "streaming", Status: Skip, Detail: "no completion"})
		pr.add(Check{Name: "tool call", Status: Skip, Detail: "no completion"})
		return
	}
	if !hasCheck(pr.checks, "auth") {
		pr.add(Check{Name: "auth", Status: OK, Detail: "request accepted"})
	}
	pr.add(Check{Name: "completion", Status: OK, MS: ms,
		Detail: fmt.Sprintf("%q, finish %s, %d tokens", textcut.Line(resp.Message.Content, 41), orDash(resp.FinishReason), resp.Usage.TotalTokens)})
	if first > 0 {
		pr.add(Check{Name: "streaming", Status: OK, Detail: fmt.Sprintf("first text after %.0f ms", first), MS: first})
	} else {
		pr.add(Check{Name: "streaming", Status: OK, Detail: "streamed answer without text"})
	}

	t = time.Now()
	req = loop.Request{
		Messages: []loop.Message{{Role: loop.RoleUser, Content: "Call the ping tool now."}},
		Tools:    []loop.ToolSpec{{Name: "ping", Description: "Answer a ping. Call it when asked to.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	resp, err = model.Stream(ctx, req, nil)
	ms = since(t)
	if err != nil {
		pr.add(pr.failure("tool call", err, ms))
		return
	}
	for _, call := range resp.Message.ToolCalls {
		if call.Name == "ping" {
			pr.add(Check{Name: "tool call", Status: OK, Detail: "ping called", MS: ms})
			return
		}
	}
	pr.add(Check{Name: "tool call", Status: Fail, MS: ms,
		Detail: fmt.Sprintf("the model answered %q without calling the tool", textcut.Line(resp.Message.Content, 61)),
		Hint:   toolHint})
}

// failure makes the failed check name out of a provider error, with the
// hint of its known cause (Hint). A 404 after GET /models answered 404 too
// is base_url's path, whatever the message says.
func (pr *probe) failure(name string, err error, ms float64) Check {
	c := Check{Name: name, Status: Fail, Detail: err.Error(), MS: ms, Hint: Hint(pr.p, pr.m, err)}
	var pe *loop.ProviderError
	if !errors.As(err, &pe) {
		return c
	}
	switch {
	case pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden:
		c.Name = "auth"
		// GET /models may answer without checking the key (some proxies
		// and servers do): the refusal replaces what it seemed to say, so
		// the report has one auth row, and says why it looked accepted.
		for i, prev := range pr.checks {
			if prev.Name == "auth" && prev.Status == OK {
				pr.checks = append(pr.checks[:i], pr.checks[i+1:]...)
				c.Detail += " (GET /models answered without checking it)"
				break
			}
		}
	case pe.Status == http.StatusNotFound && pr.models404:
		c.Hint = suffixHint(pr.p.BaseURL)
	}
	return c
}

func hasCheck(cs []Check, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plural is one for 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
