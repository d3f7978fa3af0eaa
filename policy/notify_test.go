package policy_test

import (
	"strings"
	"testing"
)

// TestApprovalsNotify: approvals.notify takes a webhook (an http(s) URL or
// env:NAME), desktop and page; desktop defaults to true. A bad value is an
// error that names the field, and never repeats a webhook's address.
func TestApprovalsNotify(t *testing.T) {
	p, fs := parse(t, "version: 1\n")
	if !p.Approvals.Notify.Desktop || p.Approvals.Notify.Webhook != "" {
		t.Errorf("default notify: %+v", p.Approvals.Notify)
	}
	p, fs = parse(t, "version: 1\napprovals:\n  notify:\n    webhook: env:SLACK_URL\n    desktop: false\n    page: https://warden.example/\n")
	if len(fs) != 0 || p.Approvals.Notify.Webhook != "env:SLACK_URL" || p.Approvals.Notify.Desktop || p.Approvals.Notify.Page != "https://warden.example/" {
		t.Errorf("notify: %+v %v", p.Approvals.Notify, fs)
	}
	t.Setenv("SLACK_URL", "https://hooks.example/T0/B0/x")
	if u, err := p.Approvals.Notify.WebhookURL(); err != nil || u != "https://hooks.example/T0/B0/x" {
		t.Errorf("WebhookURL = %q, %v", u, err)
	}
	// A URL in the policy works, with a warning to keep it out.
	_, fs = parse(t, "version: 1\napprovals:\n  notify:\n    webhook: https://hooks.example/T0/B0/secretpart\n")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "env:NAME") || strings.Contains(fs[0].String(), "secretpart") {
		t.Errorf("a URL in the policy: %v", fs)
	}
	for _, bad := range []struct{ src, field string }{
		{"webhook: ftp://secretpart.example/x", "approvals.notify.webhook"},
		{"webhook: env:1BAD", "approvals.notify.webhook"},
		{"page: not a url", "approvals.notify.page"},
		{"desktop: maybe", "approvals.notify.desktop"},
		{"email: me@example.com", "approvals.notify.email"},
	} {
		_, fs := parse(t, "version: 1\napprovals:\n  notify:\n    "+bad.src+"\n")
		if len(fs) == 0 || fs[0].Field != bad.field || !strings.Contains(fs[0].String(), ":4:") {
			t.Errorf("%s: findings %v, want an error at line 4 on %s", bad.src, fs, bad.field)
			continue
		}
		if strings.Contains(fs[0].String(), "secretpart") {
			t.Errorf("%s: the error repeats the webhook: %v", bad.src, fs[0])
		}
	}
}
