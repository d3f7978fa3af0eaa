package warden_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/secretforms"
)

func TestRedactString(t *testing.T) {
	cases := secretforms.Commands
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := warden.RedactString(c.In)
			if strings.Contains(got, c.Secret) {
				t.Errorf("RedactString(%q) = %q: secret kept", c.In, got)
			}
			if !strings.Contains(got, warden.Redacted) {
				t.Errorf("RedactString(%q) = %q: no marker", c.In, got)
			}
			if !strings.Contains(got, c.Keep) {
				t.Errorf("RedactString(%q) = %q: lost %q", c.In, got, c.Keep)
			}
		})
	}
	for _, s := range []string{"git status", "go test ./...", `echo "hello world"`, "ls -la src/", "KEYBOARD=us make",
		// Near misses of the forms above that hold no secret.
		"mysql -u root -p mydb", "mysql -P3306 -h db", "git push -u origin main", "sort -u names.txt",
		"docker login registry.example.com", "docker run -p 8080:80 nginx", "npm config set registry https://r.example.com",
		"htpasswd -D .htpasswd bob", "git config user.name bob", "set -euo pipefail"} {
		if got := warden.RedactString(s); got != s {
			t.Errorf("RedactString(%q) = %q, want unchanged", s, got)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	in := secretforms.Args()
	out := warden.RedactArgs(in)
	all := strings.Join([]string{
		out["command"].(string), out["password"].(string),
		out["headers"].(map[string]any)["Authorization"].(string),
		out["env"].(map[string]any)["API_TOKEN"].(string),
		out["argv"].([]any)[2].(string),
	}, " ")
	for _, secret := range secretforms.ArgSecrets {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q kept: %s", secret, all)
		}
	}
	if out["headers"].(map[string]any)["Accept"] != "json" || out["env"].(map[string]any)["HOME"] != "/root" || out["n"] != 3 {
		t.Errorf("non-secrets changed: %v", out)
	}
	if in["password"] != "hunter2" {
		t.Error("RedactArgs modified its input")
	}
	if warden.RedactArgs(nil) == nil {
		t.Error("RedactArgs(nil) = nil, want empty map")
	}
}

func TestPlanAnchors(t *testing.T) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ago := func(h int) time.Time { return now.Add(-time.Duration(h) * time.Hour) }
	anchors := []warden.Anchor{
		{ID: "crit-old", Priority: warden.Critical, CreatedAt: ago(1000)},
		{ID: "high-old", Priority: warden.High, CreatedAt: ago(49)},
		{ID: "high-new", Priority: warden.High, CreatedAt: ago(47)},
		{ID: "normal-old", Priority: warden.Normal, CreatedAt: ago(49)},
		{ID: "normal-new", Priority: warden.Normal, CreatedAt: ago(1)},
		{ID: "demoted-recent", Priority: warden.Normal, CreatedAt: ago(100), DemotedAt: ago(10)},
		{ID: "demoted-old", Priority: warden.Normal, CreatedAt: ago(200), DemotedAt: ago(50)},
		{ID: "low-old", Priority: warden.Low, CreatedAt: ago(60)},
	}
	p := warden.PlanAnchors(anchors, now, warden.StateLimits{})
	if got := strings.Join(p.Demote, ","); got != "high-old" {
		t.Errorf("demote = %s", got)
	}
	if got := strings.Join(p.Remove, ","); got != "normal-old,demoted-old,low-old" {
		t.Errorf("remove = %s", got)
	}

	// Over the limit: lowest priority, oldest first; critical and high stay.
	var many []warden.Anchor
	for i := 0; i < 5; i++ {
		many = append(many, warden.Anchor{ID: "c" + string(rune('0'+i)), Priority: warden.Critical, CreatedAt: ago(i)})
	}
	many = append(many,
		warden.Anchor{ID: "n-old", Priority: warden.Normal, CreatedAt: ago(3)},
		warden.Anchor{ID: "n-new", Priority: warden.Normal, CreatedAt: ago(1)},
		warden.Anchor{ID: "l-new", Priority: warden.Low, CreatedAt: ago(0)},
		warden.Anchor{ID: "h", Priority: warden.High, CreatedAt: ago(2)},
	)
	p = warden.PlanAnchors(many, now, warden.StateLimits{AnchorsMax: 7})
	if got := strings.Join(p.Remove, ","); got != "l-new,n-old" {
		t.Errorf("over limit remove = %s, want l-new,n-old", got)
	}
	p = warden.PlanAnchors(many, now, warden.StateLimits{AnchorsMax: 2})
	if got := strings.Join(p.Remove, ","); got != "l-new,n-old,n-new" {
		t.Errorf("preserved anchors evicted: remove = %s", got)
	}
	if _, err := warden.ParsePriority("urgent"); err == nil {
		t.Error("ParsePriority(urgent): no error")
	}
}
