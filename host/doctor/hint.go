package doctor

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/loop"
)

// Hint says what to do about err, a failed request to model m served by
// provider p, when its cause is one doctor knows: nothing listening, an
// unknown host, a certificate not trusted, a key missing or refused, a
// model the server does not have, a base_url whose path is wrong, a server
// or model without tool calls. It is "" for any other error. doctor's
// checks and the last lines of a failed run (agenthost run, chat) give the
// same advice through it. A hint holds no credential: base_url is
// redacted, and the key is named by its attribute and variables, never
// shown.
func Hint(p *config.Provider, m *config.Model, err error) string {
	if err == nil || p == nil || m == nil {
		return ""
	}
	u, _ := url.Parse(p.BaseURL)
	var (
		pe  *loop.ProviderError
		dns *net.DNSError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) && u != nil:
		host, port := hostPort(u)
		return listenHint(host, port)
	case errors.As(err, &dns) && dns.IsNotFound:
		return "check the host name in base_url"
	case plainHTTP(err) && u != nil:
		return plainHTTPHint(u)
	case certificateError(err) && u != nil:
		return tlsHint(u.Hostname())
	case !errors.As(err, &pe):
		return ""
	}
	msg := strings.ToLower(pe.Message)
	switch {
	case pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden:
		return authHint(p)
	case pe.Status >= 400 && pe.Status < 500 && strings.Contains(msg, "tool"):
		return toolHint
	case pe.Status == http.StatusNotFound && modelWord.MatchString(msg):
		return modelHint(m)
	case pe.Status == http.StatusNotFound || pe.Status == http.StatusMethodNotAllowed:
		return suffixHint(p.BaseURL)
	}
	return ""
}

// modelWord finds "model" as a word in a lowercased message ("model
// \"x\" not found", "the model `x` does not exist"), not inside another
// word.
var modelWord = regexp.MustCompile(`\bmodels?\b`)

// hostPort is the host and port of base_url, the port defaulted by scheme.
func hostPort(u *url.URL) (string, string) {
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	return u.Hostname(), port
}

func certificateError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify)
}

// plainHTTP reports whether err is an https request answered in plain
// http: net/http's words for it, or the TLS record error under them (a
// handshake of our own, doctor's tls check).
func plainHTTP(err error) bool {
	var rec tls.RecordHeaderError
	return errors.As(err, &rec) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// plainHTTPHint says that base_url's https:// meets a plain http server,
// with the http:// URL to use (its credentials redacted).
func plainHTTPHint(u *url.URL) string {
	host, port := hostPort(u)
	h := *u
	h.Scheme = "http"
	return fmt.Sprintf("base_url says https://, but the server at %s answers plain http: use %q", net.JoinHostPort(host, port), h.Redacted())
}

func listenHint(host, port string) string {
	return "is the server running and listening on " + net.JoinHostPort(host, port) + "? (Ollama: ollama serve; llama.cpp: llama-server --port " + port + ")"
}

func tlsHint(host string) string {
	return "the server's certificate is not trusted for " + host + ", or the port speaks plain http (use http://)"
}

const toolHint = "the server or model does not do tool calls: pick a model with tool support (Ollama: qwen2.5, llama3.1), start llama.cpp with --jinja, vLLM with --enable-auto-tool-choice --tool-call-parser"

// authHint explains a 401 or 403: the key is missing or refused. It names
// the variables api_key reads, when it reads any: an empty key is most
// often a variable not exported.
func authHint(p *config.Provider) string {
	vars := make([]string, len(p.APIKeyEnv))
	for i, v := range p.APIKeyEnv {
		vars[i] = "$" + v
	}
	switch {
	case p.APIKey == "" && len(vars) == 1:
		return fmt.Sprintf("the server wants an API key: api_key of provider %q is empty (%s is not set)", p.Name, vars[0])
	case p.APIKey == "" && len(vars) > 1:
		return fmt.Sprintf("the server wants an API key: api_key of provider %q is empty (%s are not set)", p.Name, strings.Join(vars, " and "))
	case p.APIKey == "":
		return fmt.Sprintf("the server wants an API key: set api_key in provider %q (e.g. api_key = env(\"OPENAI_API_KEY\"))", p.Name)
	case len(vars) > 0:
		return fmt.Sprintf("the server refused the API key of provider %q (api_key, from %s): check it (expired, wrong project, or for another server)", p.Name, strings.Join(vars, " or "))
	}
	return fmt.Sprintf("the server refused the API key of provider %q: check api_key (expired, wrong project, or for another server)", p.Name)
}

// modelHint explains a 404 that names the model: the server does not have
// it. A name read from a variable says which.
func modelHint(m *config.Model) string {
	from := ""
	if len(m.IDEnv) > 0 {
		from = " (its name comes from $" + strings.Join(m.IDEnv, " or $") + ")"
	}
	return fmt.Sprintf("the server does not have model %q%s: pull it (Ollama: ollama pull %s) or fix the model block's name", m.ID, from, m.ID)
}

// suffixHint explains a 404 on chat/completions: base_url must be the API
// root, usually ending in /v1, without /chat/completions.
func suffixHint(base string) string {
	b := strings.TrimSuffix(redact.URL(base), "/")
	switch {
	case strings.HasSuffix(b, "/chat/completions"):
		return fmt.Sprintf("base_url is the API root; agenthost adds /chat/completions: try %q", strings.TrimSuffix(b, "/chat/completions"))
	case !strings.HasSuffix(b, "/v1") && !strings.Contains(b, "/v1/") && !strings.Contains(b, "/openai"):
		return fmt.Sprintf("base_url usually ends in /v1 (the API root): try %q", b+"/v1")
	}
	return "nothing answers at " + b + "/chat/completions: check base_url's path (the API root, usually ending in /v1)"
}
