package session_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/notify"
	"github.com/warden-run/warden/session"
)

// receiver is an incoming webhook on 127.0.0.1 that keeps every body it is
// posted and answers status.
type receiver struct {
	mu     sync.Mutex
	bodies []notify.Body
	raw    []string
	status int
}

func newReceiver(t *testing.T, status int) (*receiver, string) {
	r := &receiver{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		data, _ := io.ReadAll(req.Body)
		var b notify.Body
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &b) != nil {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.raw = append(r.raw, string(data))
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *receiver) got() []notify.Body {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.Body(nil), r.bodies...)
}

const notifyPolicy = testPolicy + `approvals:
  notify:
    webhook: env:WARDEN_TEST_NOTIFY
    desktop: false
    page: http://127.0.0.1:7878/
`

// TestApprovalNotifiesWebhook: a call that queues an approval posts one
// notice to the policy's webhook (a JSON body with the text Slack and Matrix
// show, the approval id, the call, the rule and the page's link), with the
// call's secret redacted; the same call asked again finds the same pending
// approval and posts nothing more.
func TestApprovalNotifiesWebhook(t *testing.T) {
	rcv, url := newReceiver(t, http.StatusOK)
	t.Setenv("WARDEN_TEST_NOTIFY", url)
	e := setup(t, notifyPolicy)
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	call := bash("s1", "builder", "git push https://x:"+secret+"@github.com/o/r main")
	r := e.decide(t, call, session.Options{})
	if r.Decision.Decision != warden.Ask || r.Approval == nil {
		t.Fatalf("want an ask with an approval: %+v", r.Decision)
	}
	got := rcv.got()
	if len(got) != 1 {
		t.Fatalf("the webhook got %d notices, want 1", len(got))
	}
	n := got[0].Warden
	if n.Approval != r.Approval.ID || n.Rule != "ask-push" || n.Tool != "Bash" || n.URL != "http://127.0.0.1:7878/#approvals" ||
		!strings.Contains(n.Call, "git push") || !strings.Contains(n.Answer, "warden approvals approve "+r.Approval.ID) {
		t.Errorf("notice: %+v", n)
	}
	if !strings.Contains(got[0].Text, r.Approval.ID) || !strings.Contains(got[0].Text, "waits for a human") {
		t.Errorf("text: %q", got[0].Text)
	}
	if strings.Contains(rcv.raw[0], secret) {
		t.Errorf("the notice holds the secret in clear: %s", rcv.raw[0])
	}
	if r.Notice != got[0].Text || r.NoticeErr != nil {
		t.Errorf("Result.Notice %q (err %v), want the posted text", r.Notice, r.NoticeErr)
	}

	r2 := e.decide(t, call, session.Options{})
	if r2.Approval == nil || r2.Approval.ID != r.Approval.ID || r2.Notice != "" {
		t.Errorf("the same call again: approval %+v notice %q", r2.Approval, r2.Notice)
	}
	if n := len(rcv.got()); n != 1 {
		t.Errorf("the webhook got %d notices after the same call twice, want 1", n)
	}
}

// TestApprovalNoticeFailure: a receiver that refuses, or a variable that is
// not set, leaves the decision an ask with its approval; the error names
// the status or the variable, never the webhook's address.
func TestApprovalNoticeFailure(t *testing.T) {
	_, url := newReceiver(t, http.StatusNotFound)
	t.Setenv("WARDEN_TEST_NOTIFY", url)
	e := setup(t, notifyPolicy)
	r := e.decide(t, bash("s1", "builder", "git push origin main"), session.Options{})
	if r.Decision.Decision != warden.Ask || r.Approval == nil {
		t.Fatalf("want an ask with an approval: %+v", r.Decision)
	}
	if r.NoticeErr == nil || !strings.Contains(r.NoticeErr.Error(), "404") || strings.Contains(r.NoticeErr.Error(), url) {
		t.Errorf("NoticeErr = %v, want the status and not the address", r.NoticeErr)
	}

	t.Setenv("WARDEN_TEST_NOTIFY", "")
	r = e.decide(t, bash("s1", "builder", "git push origin other"), session.Options{})
	if r.Decision.Decision != warden.Ask || r.NoticeErr == nil || !strings.Contains(r.NoticeErr.Error(), "WARDEN_TEST_NOTIFY") {
		t.Errorf("unset variable: %+v, err %v", r.Decision, r.NoticeErr)
	}
}
