package ociget

// The registry's transport: the HTTP client every request goes through,
// and how its failures read.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// httpClient is the client of every registry request: bounded dial,
// handshake and header times, and redirects bounded in number and never
// from TLS to plain HTTP.
func httpClient(maxRedirect int) *http.Client {
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 15 * time.Second}).DialContext,
		TLSHandshakeTimeout:    15 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirect {
			return fmt.Errorf("more than %d redirects", maxRedirect)
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from TLS to %s refused", req.URL.Redacted())
		}
		return nil
	}}
}

// unreachable reports whether err says the registry could not be
// reached or failed (a server error), rather than answering: only then
// may a tag be taken to the digest it last resolved to.
func unreachable(err error) bool {
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode >= 500
	}
	if errors.Is(err, errdef.ErrNotFound) {
		return false
	}
	var uerr *url.Error
	return errors.As(err, &uerr) || errors.Is(err, context.DeadlineExceeded)
}

// reachErr words a registry error for a person.
func reachErr(err error) error {
	var resp *errcode.ErrorResponse
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("not found in the registry: %w", err)
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return fmt.Errorf("the registry refused access (agenthost reads public artifacts only, for now): %w", err)
	case unreachable(err):
		return fmt.Errorf("the registry could not be reached: %w", err)
	}
	return err
}
