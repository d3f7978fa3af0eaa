package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

// TestLintIntentWithoutScope: lint warns about an intent that owns
// nothing, at the line and column of its owned_scope (or of the intent when
// it has none), and reports an intents file it cannot decode as an error.
func TestLintIntentWithoutScope(t *testing.T) {
	dir := t.TempDir()
	intents := filepath.Join(dir, "intents.yaml")
	os.WriteFile(intents, []byte(`active_intents:
  - id: INT-1
    name: no scope
    constraints: [keep the API stable]
    acceptance_criteria: [tests pass]
  - id: INT-2
    owned_scope: []
  - id: INT-3
    owned_scope: ["src/**"]
`), 0o644)
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte("version: 1\ndefault: allow\nintents: {file: intents.yaml, require: [write]}\n"), 0o644)
	_, findings, err := policy.Lint(file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		if strings.HasPrefix(f.Field, "active_intents") {
			got = append(got, f.String())
		}
	}
	want := []string{
		intents + ":2:5: warning: active_intents[0].owned_scope: intent INT-1 owns nothing",
		intents + ":7:18: warning: active_intents[1].owned_scope: intent INT-2 owns nothing",
	}
	if len(got) != len(want) {
		t.Fatalf("findings %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %q, want prefix %q", got[i], want[i])
		}
	}
	list, _, err := policy.ReadIntents(intents)
	if err != nil || len(list) != 3 || list[0].Constraints[0] != "keep the API stable" || list[0].AcceptanceCriteria[0] != "tests pass" {
		t.Errorf("ReadIntents: %+v, %v", list, err)
	}

	os.WriteFile(intents, []byte("active_intents:\n  - name: no id\n"), 0o644)
	_, findings, err = policy.Lint(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Severity != policy.SevError || !strings.Contains(findings[0].Message, intents+":2:5: active_intents[0] has no id") {
		t.Errorf("an intent without id: %v", findings)
	}
}
