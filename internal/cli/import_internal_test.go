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
