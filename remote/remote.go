// Package remote is the client of a team's `warden serve`: the Go client
// (Client: POST /v1/decide and /v1/hidden), the gate of `warden mcp proxy
// --serve URL` (MCPGate), and the hook that sends an event to the service
// (`warden hook HOST --serve URL`: Hook and RunHook). Every request carries
// a fresh nonce (wire.NonceHeader) and only an answer that echoes it is
// taken; any failure to get a decision is an error with a code
// (SERVICE_UNAVAILABLE, SERVICE_REFUSED, BAD_INPUT, or the code the
// service's error body carries), which the caller answers deny.
//
// It is apart from package serve, the service itself, so that a program
// that only asks the service links none of it, and apart from
// internal/hookd, because net/http and crypto/tls would double the start
// time of warden-hook, which hosts start for every event.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// MaxAnswer bounds an answer read from the service.
const MaxAnswer = warden.MaxInput + 1<<20

// Client calls a `warden serve` with an agent token.
type Client struct {
	URL, Token string
	// HTTP is the client to use (default: one with a 60 s timeout that
	// follows no redirect).
	HTTP *http.Client
}

// DecideResponse is the answer of POST /v1/decide.
type DecideResponse struct {
	Decision warden.Decision  `json:"decision"`
	Approval *warden.Approval `json:"approval,omitempty"`
	AuditID  int64            `json:"audit_id,omitempty"`
	Replayed bool             `json:"replayed,omitempty"`
	// Error says why the decision is a failure deny.
	Error string `json:"error,omitempty"`
	// Nonce echoes the request's nonce (header X-Warden-Nonce, see
	// wire.NonceHeader): a client takes only the answer to its own
	// request.
	Nonce string `json:"nonce,omitempty"`
}

// noRedirect follows no redirect: the service answers itself, and a
// redirect (a proxy's login page, an http-to-https rule that turns the
// POST into a GET, a moved service) would have another address answer for
// it, or see the token. A redirect is answered as the service's error.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

var defaultHTTP = &http.Client{Timeout: 60 * time.Second, CheckRedirect: noRedirect}

// post sends a JSON body with a fresh nonce and returns the body of a 200
// answer that echoes it (into echo's Nonce). Anything else is an error
// that says what the service said, or that the answer is not the one to
// this request.
func (c *Client) post(ctx context.Context, path string, in any) ([]byte, string, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+path, bytes.NewReader(body))
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return nil, "", warden.Errorf(warden.CodeRefused, "warden serve URL %q: want http://HOST:PORT or https://HOST", c.URL)
	}
	nonce := wire.NewNonce()
	if nonce == "" {
		return nil, "", CheckEcho(c.URL, "", "")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set(wire.NonceHeader, nonce)
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, "", warden.Errorf(warden.CodeUnavailable, "the warden service at %s gave no answer in time", c.URL)
		}
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return nil, "", Unreachable(c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return nil, "", warden.Errorf(warden.CodeUnavailable, "the warden service at %s: reading its answer: %v", c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e wire.ErrorBody
		json.Unmarshal(data, &e)
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			e.Error = "a redirect to " + loc + ", which warden does not follow: point the client at the service's own address"
		}
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(data[:min(len(data), 200)]))
		}
		return nil, "", ServiceError(c.URL, resp.StatusCode, e)
	}
	return data, nonce, nil
}

// postJSON is post that decodes the answer into out, once it echoed the
// nonce.
func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	data, nonce, err := c.post(ctx, path, in)
	if err != nil {
		return err
	}
	var echo struct {
		Nonce string `json:"nonce"`
	}
	if err := json.Unmarshal(data, &echo); err != nil {
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s: unreadable answer: %v", c.URL, err)
	}
	// The answer must be the one to this request: an allow meant for
	// another call is no answer.
	if err := CheckEcho(c.URL, nonce, echo.Nonce); err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s: unreadable answer: %v", c.URL, err)
	}
	return nil
}

// Decide asks the service to decide a call (POST /v1/decide). An error
// comes with a deny (warden.FailClosed): never an allow.
func (c *Client) Decide(ctx context.Context, call warden.ToolCall, wait time.Duration) (DecideResponse, error) {
	return c.DecideWith(ctx, call, wire.DecideRequest{Wait: durationText(wait)})
}

// DecideWith is Decide with the whole request (its Call is set from call):
// a call id to retry a call under, or host prompts.
func (c *Client) DecideWith(ctx context.Context, call warden.ToolCall, req wire.DecideRequest) (DecideResponse, error) {
	raw, err := json.Marshal(call)
	if err != nil {
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	req.Call = raw
	var resp DecideResponse
	if err := c.postJSON(ctx, "/v1/decide", req, &resp); err != nil {
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	if resp.Decision.Decision == "" {
		err := warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no decision", c.URL)
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	if resp.Error != "" && resp.Decision.Decision != warden.Deny {
		// A failure is a deny, whatever an answer says.
		err := warden.Errorf(warden.CodeUnavailable, "the warden service at %s failed: %s", c.URL, resp.Error)
		resp.Decision = warden.FailClosed(err)
	}
	return resp, nil
}

func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// Hidden asks the service which of the tools a session's role must not
// see (POST /v1/hidden).
func (c *Client) Hidden(ctx context.Context, req wire.HiddenRequest) ([]string, error) {
	var out wire.HiddenResponse
	if err := c.postJSON(ctx, "/v1/hidden", req, &out); err != nil {
		return nil, err
	}
	return out.Hidden, nil
}

// ServiceError is the error for an answer of the service at url that is
// not a decision: its HTTP status and error body. The code is the body's
// when it has one; else a refused token is SERVICE_REFUSED, a call the
// service could not read BAD_INPUT, anything else SERVICE_UNAVAILABLE.
func ServiceError(url string, status int, body wire.ErrorBody) error {
	code := warden.CodeUnavailable
	switch status {
	case 401, 403:
		code = warden.CodeRefused
	case 400, 413:
		code = warden.CodeBadInput
	}
	if body.Code != "" && validCode(body.Code) {
		code = warden.Code(body.Code)
	}
	return warden.Errorf(code, "the warden service at %s refused the call (HTTP %d: %s)", url, status, body.Error)
}

// validCode reports whether a code from an error body is one a client
// takes: upper-case letters and '_', not a success.
func validCode(c string) bool {
	if len(c) > 64 || warden.Code(c) == warden.CodeAllowed {
		return false
	}
	return strings.IndexFunc(c, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r == '_') }) < 0
}

// Unreachable is the error for a service that gave no answer.
func Unreachable(url string, err error) error {
	return warden.Errorf(warden.CodeUnavailable, "the warden service at %s is unreachable (%v); no call is allowed until it answers", url, err)
}

// CheckEcho checks that the service at url echoed the nonce sent with the
// request it answers. No echo at all is a service older than this client
// (SERVICE_REFUSED: retrying does not help, the service must be
// upgraded); another nonce is an answer meant for another request
// (SERVICE_UNAVAILABLE).
func CheckEcho(url, sent, echoed string) error {
	switch {
	case sent == "":
		return warden.Errorf(warden.CodeUnavailable, "no nonce for the request to the warden service at %s: the system's random source failed", url)
	case echoed == sent:
		return nil
	case echoed == "":
		return warden.Errorf(warden.CodeRefused, "the warden service at %s answered without echoing the request's nonce (%s): "+
			"the service is too old for this warden (upgrade warden serve), or something between answered in its place; its answer is not taken", url, wire.NonceHeader)
	default:
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent an answer meant for another request (nonce %q echoed, %q sent): "+
			"a proxy, cache or load balancer between gave the wrong response; its answer is not taken", url, cut(echoed, 40), sent)
	}
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
