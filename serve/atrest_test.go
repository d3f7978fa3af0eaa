package serve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/storetest"
)

// TestApprovalsNoSecret: calls that carry every secret form the redaction
// test knows are decided by the service (each queues an approval); the
// approvals queue (GET /v1/approvals, pending and all, and each approval)
// shows none of the secrets in clear.
func TestApprovalsNoSecret(t *testing.T) {
	v := start(t, `version: 1
default: ask
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files.
`)
	calls := storetest.SecretCalls("s-secret")
	for _, c := range calls {
		call, _ := json.Marshal(c)
		v.decide(string(call), "")
	}
	list := v.pending(len(calls) / 3)
	secrets := storetest.Secrets()
	check := func(what string, body []byte) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(string(body), s) {
				t.Errorf("%s shows the secret %q in clear", what, s)
			}
		}
	}
	for _, path := range []string{"/v1/approvals", "/v1/approvals?status=all", "/v1/audit"} {
		code, body := v.do("GET", path, v.person, nil)
		if code != 200 || len(body) < 100 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		check("GET "+path, body)
	}
	for _, a := range list {
		code, body := v.do("GET", "/v1/approvals/"+a.ID, v.person, nil)
		if code != 200 {
			t.Errorf("GET approval %s: %d %s", a.ID, code, body)
		}
		check("GET /v1/approvals/"+a.ID, body)
		var got warden.Approval
		if json.Unmarshal(body, &got) != nil || len(got.Parts) == 0 {
			t.Errorf("approval %s has no parts: %s", a.ID, body)
		}
	}
}
