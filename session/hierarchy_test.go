package session_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// TestHierarchyIsTheChain: the governance text shows the hierarchy as the
// chain of delegation the roles form (coordinator -> governance
// -> validator/builder), not alphabetically; from `delegates` when the
// policy has it, else delegating roles above the workers.
func TestHierarchyIsTheChain(t *testing.T) {
	const src = `version: 1
roles:
  aa-builder:
    description: Writes code.
    tools: [read, write, edit, shell]
  coordinator:
    description: Top of the hierarchy.
    tools: [todo, read, delegate]
    delegates: [governance]
  governance:
    tools: [todo, read, delegate]
    delegates: [validator, aa-builder]
  validator:
    tools: [read, shell]
`
	for _, c := range []struct {
		name, src, chain string
		order            []string
	}{
		{"delegates", src, "coordinator -> governance -> aa-builder / validator (you)",
			[]string{"- coordinator: Top of the hierarchy. Delegates to: governance.", "- governance: Delegates to: aa-builder, validator.", "- aa-builder: Writes code.", "- validator (you)"}},
		{"inferred", strings.NewReplacer("    delegates: [governance]\n", "", "    delegates: [validator, aa-builder]\n", "").Replace(src),
			"coordinator / governance -> aa-builder / validator (you)",
			[]string{"- coordinator: Top of the hierarchy. Delegates to: aa-builder, validator.", "- governance: Delegates to: aa-builder, validator.", "- aa-builder: Writes code.", "- validator (you)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, fs := policy.Parse(filepath.Join(t.TempDir(), "warden.yaml"), []byte(c.src))
			for _, f := range fs {
				t.Fatalf("policy: %s", f)
			}
			s := warden.Session{ID: "s", Role: "validator"}
			for name, render := range map[string]func(*policy.Policy, warden.Session, warden.ProjectState) (string, error){
				"prefix": session.Prefix, "reminder": session.Reminder} {
				text, err := render(p, s, warden.ProjectState{})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(text, "\n"+c.chain+"\n") {
					t.Errorf("%s lacks the chain %q:\n%s", name, c.chain, text)
				}
				at := -1
				for _, line := range c.order {
					i := strings.Index(text, line)
					if i < 0 || i < at {
						t.Errorf("%s: %q missing or out of chain order:\n%s", name, line, text)
					}
					at = i
				}
			}
		})
	}
}
