package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/mcpproxy"
)

// Client calls a `warden serve` with an agent token.
type Client struct {
	URL, Token string
	// HTTP is the client to use (default: one with a 60 s timeout).
	HTTP *http.Client
}

// post sends a JSON body with a fresh nonce (hookd.NonceHeader) and
// decodes a 200 answer that echoes it into out. Anything else is an error
// that says what the service said, or that the answer is not the one to
// this request.
func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return warden.Errorf(warden.CodeRefused, "warden serve URL %q: %v", c.URL, err)
	}
	nonce := hookd.NewNonce()
	if nonce == "" {
		return hookd.CheckEcho(c.URL, "", "")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set(hookd.NonceHeader, nonce)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return hookd.Unreachable(c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s: reading its answer: %v", c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(data, &e)
		return hookd.ServiceError(c.URL, resp.StatusCode, e.Error)
	}
	var echo struct {
		Nonce string `json:"nonce"`
	}
	if err := json.Unmarshal(data, &echo); err != nil {
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s: unreadable answer: %v", c.URL, err)
	}
	// The answer must be the one to this request: an allow meant for
	// another call is no answer.
	if err := hookd.CheckEcho(c.URL, nonce, echo.Nonce); err != nil {
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
	raw, err := json.Marshal(call)
	if err != nil {
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	req := DecideRequest{Call: raw}
	if wait > 0 {
		req.Wait = wait.String()
	}
	var resp DecideResponse
	if err := c.post(ctx, "/v1/decide", req, &resp); err != nil {
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	if resp.Decision.Decision == "" {
		err := warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no decision", c.URL)
		return DecideResponse{Decision: warden.FailClosed(err)}, err
	}
	return resp, nil
}

// MCPGate is the gate of `warden mcp proxy --serve URL`: the service
// decides every tools/call of the session and says which tools its role
// may not see.
type MCPGate struct {
	Client             *Client
	Session, Role, Cwd string
}

// Decide implements mcpproxy.Gate.
func (g *MCPGate) Decide(ctx context.Context, call warden.ToolCall) (mcpproxy.Verdict, error) {
	call.Session, call.Cwd, call.Host = g.Session, g.Cwd, mcpproxy.Host
	if call.Role == "" {
		call.Role = g.Role
	}
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	resp, err := g.Client.Decide(ctx, call, 0)
	v := mcpproxy.Verdict{Decision: resp.Decision}
	if err == nil && resp.Decision.Decision == warden.Ask && resp.Approval != nil && resp.Approval.Status == warden.ApprovalPending {
		v.Approval = resp.Approval.ID
	}
	return v, err
}

// HiddenRequest is the body of POST /v1/hidden.
type HiddenRequest struct {
	Tools   []string `json:"tools"`
	Role    string   `json:"role,omitempty"`
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
}

// HiddenResponse is the answer of POST /v1/hidden.
type HiddenResponse struct {
	Hidden []string `json:"hidden"`
	// Nonce echoes the request's hookd.NonceHeader.
	Nonce string `json:"nonce,omitempty"`
}

// Hidden implements mcpproxy.Gate (an error hides every tool).
func (g *MCPGate) Hidden(ctx context.Context, tools []string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	var out HiddenResponse
	if err := g.Client.post(ctx, "/v1/hidden", HiddenRequest{Tools: tools, Role: g.Role, Session: g.Session, Cwd: g.Cwd}, &out); err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, t := range out.Hidden {
		m[t] = true
	}
	return m, nil
}
