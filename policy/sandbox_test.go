package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

func TestSandboxSection(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "warden.yaml")
	cases := []struct {
		name, yaml string
		want       policy.Sandbox
		errs       []string // substrings of error findings, in order
		warns      []string
	}{
		{name: "absent", yaml: "version: 1\n", want: policy.Sandbox{}},
		{name: "full", yaml: "version: 1\nsandbox:\n  shell: required\n  network: deny\n  ports: [5432, 6379]\n  writable: [cache, /tmp]\n",
			want: policy.Sandbox{Shell: "required", Network: "deny", Ports: []int{5432, 6379}, Writable: []string{filepath.Join(dir, "cache"), "/tmp"}}},
		{name: "on", yaml: "version: 1\nsandbox:\n  shell: on\n", want: policy.Sandbox{Shell: "on", Network: "deny"}},
		{name: "bool", yaml: "version: 1\nsandbox: {shell: true, network: allow}\n", want: policy.Sandbox{Shell: "on", Network: "allow"}},
		{name: "empty writable", yaml: "version: 1\nsandbox: {shell: off, writable: []}\n", want: policy.Sandbox{Shell: "off", Network: "deny"}},
		{name: "bad shell", yaml: "version: 1\nsandbox:\n  shell: always\n", errs: []string{`3:10: error: sandbox.shell: the value "always" is not one of off, on, required`}},
		{name: "bad network", yaml: "version: 1\nsandbox:\n  network: open\n", errs: []string{`sandbox.network: "open" is not one of deny, allow`}},
		{name: "bad port", yaml: "version: 1\nsandbox:\n  ports: [0, 70000, x]\n", errs: []string{"sandbox.ports[0]: must be at least 1", "sandbox.ports[1]: 70000 is not a TCP port", "sandbox.ports[2]: must be a whole number"}},
		{name: "ports not list", yaml: "version: 1\nsandbox:\n  ports: 5432\n", errs: []string{"sandbox.ports: must be a list of port numbers"}},
		{name: "unknown key", yaml: "version: 1\nsandbox:\n  shel: on\n", errs: []string{`sandbox.shel: unknown key "shel"`}},
		{name: "glob writable", yaml: "version: 1\nsandbox:\n  writable: [\"build/*\"]\n", errs: []string{"sandbox.writable[0]: \"build/*\": folders are named exactly"}},
		{name: "file writable", yaml: "version: 1\nsandbox:\n  writable: [warden.yaml]\n", errs: []string{"sandbox.writable[0]: " + file + " is not a folder"}},
		{name: "missing writable", yaml: "version: 1\nsandbox:\n  writable: [nothere]\n", warns: []string{"does not exist"},
			want: policy.Sandbox{Network: "deny", Writable: []string{filepath.Join(dir, "nothere")}}},
		{name: "root writable", yaml: "version: 1\nsandbox:\n  writable: [/]\n", warns: []string{"makes / writable"},
			want: policy.Sandbox{Network: "deny", Writable: []string{"/"}}},
		{name: "ports with allow", yaml: "version: 1\nsandbox:\n  network: allow\n  ports: [1]\n", warns: []string{"has no effect"},
			want: policy.Sandbox{Network: "allow", Ports: []int{1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(file, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p, findings := policy.Parse(file, []byte(c.yaml))
			var errs, warns []string
			for _, f := range findings {
				if f.Severity == policy.SevError {
					errs = append(errs, f.String())
				} else if f.Field != "version" {
					warns = append(warns, f.String())
				}
			}
			if len(errs) != len(c.errs) {
				t.Fatalf("errors = %q, want %d like %q", errs, len(c.errs), c.errs)
			}
			for i, e := range c.errs {
				if !strings.Contains(errs[i], e) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], e)
				}
			}
			if len(warns) != len(c.warns) {
				t.Fatalf("warnings = %q, want %q", warns, c.warns)
			}
			for i, w := range c.warns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warns[i], w)
				}
			}
			if len(c.errs) > 0 {
				return
			}
			got := p.Sandbox
			got.Pos = policy.Pos{}
			if got.Mode() != c.want.Mode() || got.NetworkDenied() != c.want.NetworkDenied() ||
				!equalInts(got.Ports, c.want.Ports) || strings.Join(got.Writable, ",") != strings.Join(c.want.Writable, ",") {
				t.Errorf("sandbox = %+v, want %+v", got, c.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
