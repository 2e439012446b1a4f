package extism

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/internal/sandbox"
)

// maxHTTPResponse bounds the body of one HTTP response given to a plugin.
const maxHTTPResponse = defaults.HTTPBody

// allowlist is the http grant of an Extism plugin (sandbox.Allowlist)
// with the client that makes its requests.
type allowlist struct {
	*sandbox.Allowlist
	client *http.Client
}

// parseAllow checks an http allow list; the error names the bad entry.
func parseAllow(entries []string) (*allowlist, error) {
	list, err := sandbox.ParseAllowlist(entries)
	if err != nil {
		return nil, err
	}
	a := &allowlist{Allowlist: list}
	a.client = &http.Client{
		// The transport is the default one minus proxies from the
		// environment: the allowlist names the hosts reached.
		Transport: &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			if !a.Allows(req.URL) {
				return sandbox.Refused(req.URL, redact.URL(req.URL.String()), true)
			}
			return nil
		},
	}
	return a, nil
}

// allows reports whether u's origin is on the list; a nil list allows
// nothing.
func (a *allowlist) allows(u *url.URL) bool { return a != nil && a.Allows(u) }

// extismRequest is the JSON an Extism plugin passes to http_request.
type extismRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// httpRequest performs http_request: only to an allowed origin, within the
// call's deadline, with the body capped at maxHTTPResponse. A refusal or a
// failure stops the guest with an error naming it.
func (c *Call) httpRequest(reqOff, bodyOff uint64) uint64 {
	c.lastStatus, c.lastHeaders = 0, nil
	var req extismRequest
	if err := json.Unmarshal(c.block(reqOff), &req); err != nil {
		c.fail(fmt.Errorf("http_request: invalid request JSON: %v", err))
	}
	var body io.Reader
	if bodyOff != 0 {
		body = bytes.NewReader(append([]byte(nil), c.block(bodyOff)...))
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the URL in clear
		}
		c.fail(fmt.Errorf("http_request: invalid url %q: %v", redact.URL(req.URL), err))
	}
	shown := redact.URL(u.String())
	if !c.p.http.allows(u) {
		c.log.Warn().Str("plugin", c.p.name).Str("url", shown).Msg("HTTP request refused: not in the http allow list")
		c.fail(sandbox.Refused(u, shown, false))
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequestWithContext(c.ctx, method, u.String(), body)
	if err != nil {
		c.fail(fmt.Errorf("http_request: %v", err))
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := c.p.http.client.Do(hr)
	if err != nil {
		var re *sandbox.RefusedError
		if errors.As(err, &re) {
			c.log.Warn().Str("plugin", c.p.name).Str("url", re.URL).Msg("HTTP redirect refused: not in the http allow list")
			c.fail(re)
		}
		// net/http quotes the URL it failed on (a redirect's included)
		// with its query and user name in clear.
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redact.URL(ue.URL)
		}
		c.fail(fmt.Errorf("http_request to %s: %v", shown, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse+1))
	if err != nil {
		c.fail(fmt.Errorf("http_request to %s: reading the response: %v", shown, err))
	}
	if len(data) > maxHTTPResponse {
		c.fail(fmt.Errorf("http_request to %s: the response body exceeds %s", shown, bytesize.Exact(maxHTTPResponse)))
	}
	c.lastStatus = int32(resp.StatusCode)
	c.lastHeaders = map[string]string{}
	for k, v := range resp.Header {
		c.lastHeaders[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return c.write(data)
}

func (c *Call) httpHeaders() uint64 {
	if c.lastHeaders == nil {
		return 0
	}
	b, _ := json.Marshal(c.lastHeaders)
	return c.write(b)
}
