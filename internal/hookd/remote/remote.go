// Package remote sends a hook event to a team's `warden serve` (package
// serve) and prints its answer: `warden hook HOST --serve URL`, which
// warden-hook runs when a service is configured. It is apart from package
// internal/hookd because net/http and crypto/tls would double the start
// time of warden-hook, which hosts start for every event, also where no
// service is used.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/hookd"
)

// Remote answers a hook request by the service at url (POST /v1/hook with
// the agent token): the service answers exactly as `warden hook` would,
// with its policy and its store. Any failure to get that answer (no
// service, a refused token, a broken answer) is an error, which the caller
// answers deny: a remote hook never decides locally and never allows.
func Remote(url, token string, req *hookd.Request, deadline time.Time) (hookd.Response, error) {
	var resp hookd.Response
	body, err := json.Marshal(req)
	if err != nil {
		return resp, err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/v1/hook", strings.NewReader(string(body)))
	if err != nil || (hr.URL.Scheme != "http" && hr.URL.Scheme != "https") {
		return resp, warden.Errorf(warden.CodeRefused, "warden serve URL %q: want http://HOST:PORT or https://HOST", url)
	}
	nonce := hookd.NewNonce()
	if nonce == "" {
		return resp, hookd.CheckEcho(url, "", "")
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set(hookd.NonceHeader, nonce)
	r, err := client.Do(hr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return resp, warden.Errorf(warden.CodeUnavailable, "the warden service at %s gave no answer in time", url)
		}
		return resp, hookd.Unreachable(url, errors.Unwrap(err))
	}
	defer r.Body.Close()
	data, err := io.ReadAll(io.LimitReader(r.Body, hookd.MaxMessage+1))
	if err != nil {
		return resp, warden.Errorf(warden.CodeUnavailable, "the warden service at %s: reading its answer: %v", url, err)
	}
	if r.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(data, &e)
		if loc := r.Header.Get("Location"); r.StatusCode/100 == 3 && loc != "" {
			e.Error = "a redirect to " + loc + ", which warden does not follow: point the hook at the service's own address"
		}
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(data[:min(len(data), 200)]))
		}
		return resp, hookd.ServiceError(url, r.StatusCode, e.Error)
	}
	if err := json.Unmarshal(data, &resp); err != nil || len(resp.Stdout) == 0 {
		return resp, warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no hook answer (%d bytes)", url, len(data))
	}
	if err := hookd.CheckAnswer(resp.Stdout, resp.Code); err != nil {
		// A proxy's page, or a service of another version: a host would
		// read it as "no objection".
		return resp, warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent no hook answer: %v", url, err)
	}
	// The answer must be the one to this request: an allow meant for
	// another call is no answer.
	if err := hookd.CheckEcho(url, nonce, resp.Nonce); err != nil {
		return hookd.Response{}, err
	}
	return resp, nil
}

// client sends hook events to the service. It follows no redirect: the
// service answers /v1/hook itself, and a redirect (a proxy's login page,
// an http-to-https rule that turns the POST into a GET, a moved service)
// would have another address answer for it, or see the token. A redirect
// is answered as the service's error.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// RunRemote answers one hook event (args: the host and its flags; data:
// the host's hook JSON) by the service at url, prints the answer and
// returns the exit code. When the service gives no answer the call is
// denied in the host's JSON (exit code 2), with the reason.
func RunRemote(url string, args []string, data []byte, callID string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		d := warden.FailClosed(err)
		event := hook.EventName(data)
		stdout.Write(host.Failure(args[0], event, d))
		fmt.Fprintln(stderr, d.ModelText())
		return host.FailCode(args[0], event)
	}
	token, err := hookd.ServeToken()
	if err != nil {
		return fail(err)
	}
	wd, _ := os.Getwd()
	req := &hookd.Request{V: hookd.Version, Op: hookd.OpHook, Args: args, Dir: wd, Stdin: data, CallID: callID,
		Interactive: host.Interactive(args[0])}
	// warden-hook, which runs this, gives up at the call's deadline plus
	// 5 s: the service gets 3 s of it, so that its silence is reported
	// here, as the service's, rather than as a hook that did not answer.
	resp, err := Remote(url, token, req, time.Now().Add(hook.CallDeadline(args[1:])+3*time.Second))
	if err != nil {
		return fail(err)
	}
	stdout.Write(resp.Stdout)
	stderr.Write(resp.Stderr)
	return resp.Code
}
