package mcpproxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPUpstream is the transport to an upstream server over streamable
// HTTP at endpoint, sending header (an API token, say) with every request.
//
// It follows a redirect only within the endpoint's origin (scheme, host
// and port), and sends header only there: a server that redirects
// elsewhere would otherwise have the client's calls, and the token, sent
// on to the other site.
func HTTPUpstream(endpoint string, header http.Header) mcp.Transport {
	origin := ""
	if u, err := url.Parse(endpoint); err == nil {
		origin = originOf(u)
	}
	return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{
		Transport: headerTransport{header: header, origin: origin, next: http.DefaultTransport},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if o := originOf(req.URL); o != origin || origin == "" {
				return fmt.Errorf("warden mcp proxy: the upstream server redirected to %s, outside %s; the proxy follows redirects only within the server's origin", o, origin)
			}
			if len(via) >= 10 {
				return errors.New("warden mcp proxy: stopped after 10 redirects")
			}
			return nil
		},
	}}
}

// originOf is a URL's scheme, host and port (the scheme's default port
// when none is given), in lower case.
func originOf(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + host + ":" + port
}

// headerTransport adds headers to every request to origin.
type headerTransport struct {
	header http.Header
	origin string
	next   http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) == 0 || t.origin == "" || originOf(req.URL) != t.origin {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, vs := range t.header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return t.next.RoundTrip(req)
}

// Interface guards.
var _ http.RoundTripper = headerTransport{}
