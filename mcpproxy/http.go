package mcpproxy

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPUpstream is the transport to an upstream server over streamable
// HTTP at url, sending header (an API token, say) with every request.
func HTTPUpstream(url string, header http.Header) mcp.Transport {
	t := &mcp.StreamableClientTransport{Endpoint: url}
	if len(header) > 0 {
		t.HTTPClient = &http.Client{Transport: headerTransport{header: header, next: http.DefaultTransport}}
	}
	return t
}

// headerTransport adds headers to every request.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
