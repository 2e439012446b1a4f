package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	secretPassword = "topsecretpw"
	secretQuery    = "SECRETQ"
	secretKey      = "sk-secret-key"
	secretHeader   = "azure-secret"
)

// leaks fails the test when s holds one of the secrets above.
func leaks(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{secretPassword, secretQuery, secretKey, secretHeader} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret %q: %s", what, secret, s)
		}
	}
}

// TestBaseURLQueryKept: a query in the base URL is the query of the request,
// after the path go-openai appends, and userinfo still authenticates.
func TestBaseURLQueryKept(t *testing.T) {
	var mu sync.Mutex
	var uris []string
	var auth string
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.URL.RequestURI())
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		sse("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")(w, r)
	})
	base := strings.Replace(s.URL, "http://", "http://alice:"+secretPassword+"@", 1) + "/v1/?api-version=2024-06-01&api-key=" + secretQuery
	p := New(Options{BaseURL: base, ModelID: "m"})
	if _, err := p.Stream(context.Background(), ask("hi"), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := "/v1/chat/completions?api-version=2024-06-01&api-key=" + secretQuery
	if len(uris) != 1 || uris[0] != want {
		t.Errorf("request URIs = %q, want [%q]", uris, want)
	}
	if !strings.HasPrefix(auth, "Basic ") {
		t.Errorf("Authorization = %q, want Basic (from the base URL's userinfo)", auth)
	}
	if got, want := p.endpoint(), "http://REDACTED@"+strings.TrimPrefix(s.URL, "http://")+"/v1/chat/completions?api-version=REDACTED&api-key=REDACTED"; got != want {
		t.Errorf("endpoint() = %q, want %q", got, want)
	}
}

// TestCredentialsRedacted: no error message carries the base URL's
// credentials, the API key or a credential header, whether the failure is
// the network, a cut stream or a server echoing them; nor does any error in
// the chain the provider made itself (net/http's *url.Error quotes the
// URL). The server's own echo stays in go-openai's wrapped error, which
// nothing prints.
func TestCredentialsRedacted(t *testing.T) {
	withCreds := func(u string) string {
		return strings.Replace(u, "http://", "http://alice:"+secretPassword+"@", 1) + "?api-key=" + secretQuery
	}
	opts := func(base string) Options {
		return Options{BaseURL: base, ModelID: "m", APIKey: secretKey, Headers: map[string]string{"api-key": secretHeader, "X-Title": "agenthost"}}
	}
	echo := func(w http.ResponseWriter, r *http.Request) {
		status(401, fmt.Sprintf(`{"error":{"message":"bad credentials %s %s %s","type":"authentication_error"}}`,
			r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("api-key")))(w, r)
	}
	cases := []struct {
		name     string
		base     func(t *testing.T) string
		contains string
		chain    bool // check the wrapped errors too
	}{
		{"connection refused", func(t *testing.T) string { return withCreds(refusedURL(t)) }, "request to http://REDACTED@127.0.0.1:", true},
		{"cut stream", func(t *testing.T) string {
			return withCreds(newServer(t, hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
				chunked("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))).URL + "/v1")
		}, "/v1/chat/completions?api-key=REDACTED cut after", true},
		{"server echoes them", func(t *testing.T) string { return withCreds(newServer(t, echo).URL + "/v1") }, "bad credentials /v1/chat/completions?api-key=REDACTED Bearer REDACTED REDACTED", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(opts(tc.base(t))).Stream(context.Background(), ask("hi"), nil)
			pe := providerError(t, err)
			if !strings.Contains(pe.Message, tc.contains) {
				t.Errorf("Message = %q, want it to contain %q", pe.Message, tc.contains)
			}
			leaks(t, "Error()", err.Error())
			for e := pe.Err; tc.chain && e != nil; e = errors.Unwrap(e) {
				leaks(t, fmt.Sprintf("wrapped %T", e), e.Error())
			}
		})
	}
}

// trickle sends a text chunk every 10ms until the client goes away: a
// stream that the idle timer never ends.
func trickle(toolCall bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		if toolCall {
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n")
		}
		for {
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			fl.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond): // pacing, as a slow server does
			}
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    want
	}{
		{"trickling stream", trickle(false), want{contains: "request_timeout 150ms passed", retryable: true}},
		{"after tool calls", trickle(true), want{contains: "not replayed", retryable: false}},
		{"no response headers", waitForClient(""), want{contains: "within request_timeout 150ms", retryable: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			start := time.Now()
			_, err := s.provider(Options{IdleTimeout: time.Minute, RequestTimeout: 150 * time.Millisecond}).Stream(context.Background(), ask("hi"), nil)
			checkError(t, err, tc.want)
			if !errors.Is(err, errRequestTimeout) {
				t.Errorf("error %v does not wrap errRequestTimeout", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("a request_timeout of 150ms took %v", d)
			}
		})
	}
}
