package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	os.WriteFile(settings, []byte(`{"permissions":{"allow":["Bash(go test:*)"],"deny":["Bash(rm:*)","Nope"]}}`), 0o644)
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"import"}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("claude", settings)
	if code != ExitOK || !strings.Contains(out, `command: ["rm *"]`) || !strings.Contains(errs, `warning: permissions.deny[1] "Nope"`) {
		t.Fatalf("import: %d\n%s\n%s", code, out, errs)
	}
	dest := filepath.Join(dir, "warden.yaml")
	if code, out, errs = run("claude", settings, "-o", dest); code != ExitOK || !strings.Contains(out, "wrote") {
		t.Fatalf("import -o: %d %s %s", code, out, errs)
	}
	if _, err := policy.Load(dest); err != nil {
		t.Fatalf("written policy does not load: %v", err)
	}
	if code, _, errs = run("claude", settings, "-o", dest); code != ExitError || !strings.Contains(errs, "will not overwrite") {
		t.Errorf("second import -o: %d %s", code, errs)
	}
	if code, _, errs = run("vscode", settings); code != ExitError || !strings.Contains(errs, "unknown host") {
		t.Errorf("unknown host: %d %s", code, errs)
	}
	if code, _, errs = run("claude", filepath.Join(dir, "missing.json")); code != ExitError || !strings.Contains(errs, "missing.json") {
		t.Errorf("missing file: %d %s", code, errs)
	}
}

// TestImportOpenCodeAgents: `warden import opencode` carries each agent's
// permissions into a role and prints what it could not carry, with the
// reason; the policy it writes loads.
func TestImportOpenCodeAgents(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "opencode.json")
	os.WriteFile(cfg, []byte(`{"agent": {"reviewer": {"permission": {"task": {"idumb-builder": "deny"}, "external_directory": "allow"}}}}`), 0o644)
	dest := filepath.Join(dir, "warden.yaml")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"import", "opencode", cfg, "-o", dest}, strings.NewReader(""), &out, &errb)
	if code != ExitOK || !strings.Contains(errb.String(), `warning: agent.reviewer.permission.external_directory "allow" is not carried over: warden has one workspace.outside`) {
		t.Fatalf("import: %d\n%s\n%s", code, out.String(), errb.String())
	}
	p, err := policy.Load(dest)
	if err != nil {
		t.Fatalf("written policy does not load: %v", err)
	}
	if p.Roles["reviewer"] == nil || len(p.Rules) != 1 || p.Rules[0].Args["subagent_type"] != "idumb-builder" || p.Rules[0].Roles[0] != "reviewer" {
		t.Errorf("roles %v, rules %+v: want a reviewer role and its delegate deny on subagent_type", p.Roles, p.Rules)
	}
}
