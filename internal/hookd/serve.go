package hookd

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// The environment of a remote hook: the service (`warden serve`) that
// decides and audits every call of a team's agents, and the agent token.
// The hook's --serve flag names the service too (`warden init HOST
// --serve URL` writes it); the token is never on a command line.
const (
	ServeURLEnv   = "WARDEN_SERVE_URL"
	ServeTokenEnv = "WARDEN_SERVE_TOKEN"
)

// ServeTokenFile is where the agent token is read from when
// WARDEN_SERVE_TOKEN is not set: $XDG_CONFIG_HOME/warden/serve-token, or
// ~/.config/warden/serve-token.
func ServeTokenFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "warden", "serve-token")
}

// ServeToken is the agent token for the service: $WARDEN_SERVE_TOKEN, else
// the first line of ServeTokenFile.
func ServeToken() (string, error) {
	if t := strings.TrimSpace(os.Getenv(ServeTokenEnv)); t != "" {
		return t, nil
	}
	file := ServeTokenFile()
	data, err := os.ReadFile(file)
	if err != nil {
		return "", warden.Errorf(warden.CodeRefused, "no agent token for warden serve: set %s or write it to %s (`warden serve token add --kind agent NAME` makes one)", ServeTokenEnv, file)
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(tok), nil
}

// ServiceError is the error for an answer of the service at url that is
// not a decision: its HTTP status and error message. A refused token is
// SERVICE_REFUSED, a call the service could not read BAD_INPUT, anything
// else SERVICE_UNAVAILABLE.
func ServiceError(url string, status int, msg string) error {
	code := warden.CodeUnavailable
	switch status {
	case 401, 403:
		code = warden.CodeRefused
	case 400, 413:
		code = warden.CodeBadInput
	}
	return warden.Errorf(code, "the warden service at %s refused the call (HTTP %d: %s)", url, status, msg)
}

// Unreachable is the error for a service that gave no answer.
func Unreachable(url string, err error) error {
	return warden.Errorf(warden.CodeUnavailable, "the warden service at %s is unreachable (%v); no call is allowed until it answers", url, err)
}

// ServeURL is the service a hook with these flags (the arguments after
// the host) sends its events to: its --serve flag, else $WARDEN_SERVE_URL,
// else "" (decide here).
func ServeURL(flags []string) string {
	var f hook.Flags
	if len(flags) > 0 && f.FlagSet(io.Discard).Parse(flags) == nil && f.Serve != "" {
		return f.Serve
	}
	return os.Getenv(ServeURLEnv)
}

// NonceHeader carries a fresh nonce with every request a client sends to
// the service (POST /v1/decide, /v1/hook, /v1/hidden); the service echoes
// it in its answer ("nonce"). The client takes only an answer that echoes
// its own nonce: an answer meant for another request (a proxy or cache in
// between, a replayed response, a load balancer that mixes up
// connections) is no answer. It is a header, not a field of the body, so
// that a service older than the echo still reads the request (it answers
// without the echo, which the client refuses as too old).
const NonceHeader = "X-Warden-Nonce"

// maxNonce bounds the nonce the service echoes.
const maxNonce = 128

// NewNonce is a fresh nonce for one request ("" if the system's random
// source failed: the caller must not send the request).
func NewNonce() string {
	id := hook.NewCallID()
	if id == "" {
		return ""
	}
	return "n-" + strings.TrimPrefix(id, "c-")
}

// ValidNonce reports whether n is a nonce the service echoes: 1 to 128
// characters of letters, digits, '-', '_' and '.'.
func ValidNonce(n string) bool {
	if n == "" || len(n) > maxNonce {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
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
			"the service is too old for this warden (upgrade warden serve), or something between answered in its place; its answer is not taken", url, NonceHeader)
	default:
		return warden.Errorf(warden.CodeUnavailable, "the warden service at %s sent an answer meant for another request (nonce %q echoed, %q sent): "+
			"a proxy, cache or load balancer between gave the wrong response; its answer is not taken", url, cutText([]byte(echoed), 40), sent)
	}
}
