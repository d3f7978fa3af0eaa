package policy_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
)

const supportPlugin = `name: support
schema:
  type: object
  properties:
    language: {type: string}
  required: [language]
long_instruction: Give the language the user writes in.
short_instruction: '{"language": "en"}'
`

// TestReportSection: the report section loads its plugin files relative to
// the policy's folder with the defaults, and every problem (a path outside
// the folder, a missing file, a schema that does not compile, a name used
// twice, an unknown key, a bad retry count, an undefined role) is a
// finding at the entry's file:line:col.
func TestReportSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("report/support.yaml", supportPlugin)
	write("report/again.yaml", supportPlugin)
	write("report/badschema.yaml", "name: bad\nschema: {type: 12}\nlong_instruction: x\nshort_instruction: y\n")
	load := func(src string) (*policy.Policy, []policy.Finding) {
		t.Helper()
		return policy.Parse(filepath.Join(dir, "warden.yaml"), []byte(src))
	}

	p, fs := load("version: 1\nreport:\n  plugins: [report/support.yaml]\n")
	if len(fs) != 0 {
		t.Fatalf("findings: %v", fs)
	}
	r := p.Report
	if r == nil || !r.Required || r.Retries != policy.DefaultReportRetries || len(r.Files) != 1 || r.Files[0].Name != "support" {
		t.Fatalf("report: %+v", r)
	}
	if !r.Applies("", 0) || r.Applies("", 1) {
		t.Errorf("default roles: top-level sessions only")
	}
	p, _ = load("version: 1\nroles:\n  coder: {}\nreport:\n  roles: [coder]\n  required: false\n")
	if p.Report.Required || !p.Report.Applies("coder", 1) || p.Report.Applies("", 0) || len(p.Report.Files) != 0 {
		t.Errorf("roles and required: %+v", p.Report)
	}
	if (&policy.Policy{}).Report.Applies("", 0) {
		t.Error("no report section applies")
	}

	cases := []struct {
		name, src string
		line, col int
		sev       string
		parts     []string
	}{
		{"outside the folder", "version: 1\nreport:\n  plugins: [../x.yaml]\n", 3, 13, policy.SevError, []string{"report.plugins[0]", `contains ".."`}},
		{"absolute", "version: 1\nreport:\n  plugins:\n    - /etc/x.yaml\n", 4, 7, policy.SevError, []string{"is absolute"}},
		{"missing file", "version: 1\nreport:\n  plugins: [report/none.yaml]\n", 3, 13, policy.SevError, []string{"plugin file report/none.yaml: file not found"}},
		{"schema does not compile", "version: 1\nreport:\n  plugins: [report/badschema.yaml]\n", 3, 13, policy.SevError, []string{"report/badschema.yaml", "line 2", "schema"}},
		{"name twice", "version: 1\nreport:\n  plugins: [report/support.yaml, report/again.yaml]\n", 3, 34, policy.SevError, []string{`plugin name "support" is already used by report/support.yaml`}},
		{"unknown key", "version: 1\nreport:\n  plugin: [x]\n", 3, 3, policy.SevError, []string{`unknown key "plugin"`}},
		{"negative retries", "version: 1\nreport:\n  retries: -1\n", 3, 12, policy.SevError, []string{"report.retries", "at least 0"}},
		{"undefined role", "version: 1\nreport:\n  roles: [nobody]\n", 3, 11, policy.SevWarning, []string{`role "nobody" is not defined`}},
		{"retries without required", "version: 1\nreport:\n  required: false\n  retries: 3\n", 4, 3, policy.SevWarning, []string{"no effect"}},
	}
	for _, c := range cases {
		_, fs := load(c.src)
		f, ok := finding(fs, c.parts...)
		if !ok {
			t.Errorf("%s: no finding with %q in %v", c.name, c.parts, fs)
			continue
		}
		if f.Pos.Line != c.line || f.Pos.Col != c.col || f.Severity != c.sev {
			t.Errorf("%s: finding %v at %d:%d (%s), want %d:%d (%s)", c.name, f, f.Pos.Line, f.Pos.Col, f.Severity, c.line, c.col, c.sev)
		}
	}
}

// TestReportCacheKey: report.cache is off by default, takes enabled and a
// ttl (days allowed), and a bad ttl or an unknown key is a finding at its
// line.
func TestReportCacheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	load := func(src string) (*policy.Policy, []policy.Finding) {
		t.Helper()
		return policy.Parse(filepath.Join(dir, "warden.yaml"), []byte(src))
	}
	p, fs := load("version: 1\nreport: {}\n")
	if len(fs) != 0 || p.Report.Cache.Enabled || p.Report.Cache.TTL != policy.DefaultReportCacheTTL {
		t.Fatalf("default cache: %+v %v", p.Report.Cache, fs)
	}
	p, fs = load("version: 1\nreport:\n  cache: {enabled: true, ttl: 7d}\n")
	if len(fs) != 0 || !p.Report.Cache.Enabled || p.Report.Cache.TTL != 7*24*time.Hour {
		t.Fatalf("cache 7d: %+v %v", p.Report.Cache, fs)
	}
	for _, c := range []struct {
		src   string
		line  int
		parts []string
	}{
		{"version: 1\nreport:\n  cache:\n    ttl: 0s\n", 4, []string{"report.cache.ttl", "positive"}},
		{"version: 1\nreport:\n  cache:\n    ttl: soon\n", 4, []string{"report.cache.ttl"}},
		{"version: 1\nreport:\n  cache:\n    enabled: yes\n", 4, []string{"report.cache.enabled", "true or false"}},
		{"version: 1\nreport:\n  cache:\n    size: 10\n", 4, []string{`unknown key "size"`}},
	} {
		_, fs := load(c.src)
		f, ok := finding(fs, c.parts...)
		if !ok || f.Severity != policy.SevError || f.Pos.Line != c.line {
			t.Errorf("%q: finding %v (%v), want an error at line %d with %q", c.src, f, fs, c.line, c.parts)
		}
	}
}
