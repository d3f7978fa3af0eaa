package warden_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

func TestRedactString(t *testing.T) {
	cases := []struct {
		name, in, secret, keep string
	}{
		{"auth header", `curl -H "Authorization: Bearer abc.def.ghi123" https://x`, "abc.def.ghi123", "curl -H"},
		{"auth header lower", `curl -H 'authorization: token s3cr3tvalue' x`, "s3cr3tvalue", "curl"},
		{"env assignment", `API_KEY=sk_live_123456 npm run deploy`, "sk_live_123456", "npm run deploy"},
		{"db password", `DB_PASSWORD='pa ss' psql`, "pa ss", "psql"},
		{"export token", `export GITHUB_TOKEN=abcdef123456`, "abcdef123456", "export"},
		{"flag equals", `mysql --password=hunter2 -u root`, "hunter2", "-u root"},
		{"flag space", `tool --token hunter2 build`, "hunter2", "build"},
		{"url credentials", `git clone https://bob:hunter2@example.com/r.git`, "hunter2", "bob:"},
		{"openai key", `echo sk-proj-abcdefghijklmnopqrstuv`, "sk-proj-abcdefghijklmnopqrstuv", "echo"},
		{"github token", `gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123`, "ghp_abcdefghijklmnopqrstuvwxyz0123", "gh"},
		{"aws key", `aws configure set aws_access_key_id AKIAABCDEFGHIJKLMNOP`, "AKIAABCDEFGHIJKLMNOP", "aws configure"},
		{"json", `{"password": "hunter2", "user": "bob"}`, "hunter2", "bob"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow", ""},
		// Secrets given as a separate word to a program that takes them so.
		{"aws configure set", `aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENG --profile p`, "wJalrXUtnFEMIK7MDENG", "aws configure set aws_secret_access_key"},
		{"npm config set", `npm config set //registry.example.com/:_authToken npm_s3cr3tT0ken`, "npm_s3cr3tT0ken", "npm config set"},
		{"git config", `git config --global github.token gh0sTt0k3n`, "gh0sTt0k3n", "git config"},
		{"curl -u", `curl -s -u admin:Hunter2pw https://example.com/api`, "Hunter2pw", "admin:"},
		{"curl --user", `curl --user 'admin:Hunter2pw' https://example.com/api`, "Hunter2pw", "https://example.com/api"},
		{"curl --user=", `curl --user=admin:Hunter2pw https://x`, "Hunter2pw", "admin"},
		{"mysql -p", `mysql -u root -pHunter2pw mydb`, "Hunter2pw", "mydb"},
		{"mysqldump -p", `mysqldump -h db -pHunter2pw --all-databases > all.sql`, "Hunter2pw", "all.sql"},
		{"docker login -p", `docker login -u bob -p Hunter2pw registry.example.com`, "Hunter2pw", "registry.example.com"},
		{"podman login -p", `podman login --username bob -p=Hunter2pw quay.io`, "Hunter2pw", "quay.io"},
		{"sshpass -p", `sshpass -p 'Hunter2pw' ssh bob@host uptime`, "Hunter2pw", "ssh bob@host"},
		{"sshpass -p joined", `sshpass -pHunter2pw ssh host`, "Hunter2pw", "ssh host"},
		{"htpasswd -b", `htpasswd -b /etc/nginx/.htpasswd bob Hunter2pw`, "Hunter2pw", "bob"},
		{"htpasswd -cb", `htpasswd -cbB .htpasswd bob Hunter2pw && nginx -s reload`, "Hunter2pw", "nginx -s reload"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := warden.RedactString(c.in)
			if strings.Contains(got, c.secret) {
				t.Errorf("RedactString(%q) = %q: secret kept", c.in, got)
			}
			if !strings.Contains(got, warden.Redacted) {
				t.Errorf("RedactString(%q) = %q: no marker", c.in, got)
			}
			if !strings.Contains(got, c.keep) {
				t.Errorf("RedactString(%q) = %q: lost %q", c.in, got, c.keep)
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
	in := map[string]any{
		"command":  "STRIPE_SECRET_KEY=rk_abc123 ./deploy",
		"password": "hunter2",
		"headers":  map[string]any{"Authorization": "Bearer xyz", "Accept": "json"},
		"env":      map[string]any{"API_TOKEN": "t0k3n", "HOME": "/root"},
		"argv":     []any{"bash", "-lc", "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstu"},
		"n":        3,
		"token":    "",
	}
	out := warden.RedactArgs(in)
	all := strings.Join([]string{
		out["command"].(string), out["password"].(string),
		out["headers"].(map[string]any)["Authorization"].(string),
		out["env"].(map[string]any)["API_TOKEN"].(string),
		out["argv"].([]any)[2].(string),
	}, " ")
	for _, secret := range []string{"rk_abc123", "hunter2", "xyz", "t0k3n", "sk-abcdefghijklmnopqrstu"} {
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
