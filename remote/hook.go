package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/wire"
)

// Hook answers a hook request by the service (POST /v1/hook with the
// agent token) before deadline: the service answers exactly as `warden
// hook` would, with its policy and its store. Any failure to get that
// answer (no service, a refused token, a broken answer) is an error,
// which the caller answers deny: a remote hook never decides locally and
// never allows.
func (c *Client) Hook(req *wire.HookRequest, deadline time.Time) (wire.HookResponse, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	cc := *c
	if cc.HTTP == nil {
		// The deadline bounds the call, not a client timeout.
		cc.HTTP = hookHTTP
	}
	data, nonce, err := cc.post(ctx, "/v1/hook", req)
	if err != nil {
		return wire.HookResponse{}, err
	}
	var resp wire.HookResponse
	if err := json.Unmarshal(data, &resp); err != nil || len(resp.Stdout) == 0 {
		return wire.HookResponse{}, warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no hook answer (%d bytes)", c.URL, len(data))
	}
	if err := wire.CheckAnswer(resp.Stdout, resp.Code); err != nil {
		// A proxy's page, or a service of another version: a host would
		// read it as "no objection".
		return wire.HookResponse{}, warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no hook answer: %v", c.URL, err)
	}
	// The answer must be the one to this request: an allow meant for
	// another call is no answer.
	if err := CheckEcho(c.URL, nonce, resp.Nonce); err != nil {
		return wire.HookResponse{}, err
	}
	return resp, nil
}

// hookHTTP is the hook's HTTP client: no timeout of its own (the call's
// deadline bounds it), no redirect followed.
var hookHTTP = &http.Client{CheckRedirect: noRedirect}

// RunHook answers one hook event (args: the host and its flags; data:
// the host's hook JSON) by the service at url, prints the answer and
// returns the exit code. When the service gives no answer the call is
// denied in the host's JSON (exit code 2), with the reason.
//
// token gives the agent token (hookd.ServeToken): an error is answered
// deny.
func RunHook(url string, token func() (string, error), args []string, data []byte, callID string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		d := warden.FailClosed(err)
		event := hook.EventName(data)
		stdout.Write(host.Failure(args[0], event, d))
		fmt.Fprintln(stderr, d.ModelText())
		return host.FailCode(args[0], event)
	}
	tok, err := token()
	if err != nil {
		return fail(err)
	}
	wd, _ := os.Getwd()
	req := &wire.HookRequest{V: wire.Version, Op: wire.OpHook, Args: args, Dir: wd, Stdin: data, CallID: callID,
		Interactive: host.Interactive(args[0])}
	// warden-hook, which runs this, gives up at the call's deadline plus
	// 5 s: the service gets 3 s of it, so that its silence is reported
	// here, as the service's, rather than as a hook that did not answer.
	c := &Client{URL: url, Token: tok}
	resp, err := c.Hook(req, time.Now().Add(hook.CallDeadline(args[1:])+3*time.Second))
	if err != nil {
		return fail(err)
	}
	stdout.Write(resp.Stdout)
	stderr.Write(resp.Stderr)
	return resp.Code
}
