package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
)

const guidePolicy = `version: 1
model_errors:
  layout: seed
roles:
  coordinator:
    description: Plans and delegates.
    tools: [read, todo, delegate]
    delegates: [builder]
  builder:
    description: Edits code and runs commands.
    tools: [read, write, edit, shell, todo]
    first: [read]
    first_enforce: deny
rules:
  - id: no-force
    effect: deny
    tool: shell
    command: ["git push --force *"]
    message: Force-pushing rewrites shared history.
    suggestion: Push without --force.
`

// TestSeedLayout: under model_errors.layout: seed a deny names the
// agent's role, the hierarchy and numbered next steps (the suggestion,
// then what the role's rules point to), in plain text; without it the
// text is warden's usual one.
func TestSeedLayout(t *testing.T) {
	p, fs := policy.Parse(t.TempDir()+"/warden.yaml", []byte(guidePolicy))
	for _, f := range fs {
		if f.Severity == policy.SevError {
			t.Fatal(f)
		}
	}
	e, err := engine.Compile(p, testView())
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(warden.ToolCall{Tool: "Bash", Role: "coordinator", Args: map[string]any{"command": "ls"}}, nil).Decision
	text := d.ModelText()
	for _, want := range []string{"warden BLOCKED: ROLE_TOOL_DENIED", "Agent Role: coordinator: Plans and delegates.",
		"Hierarchy: coordinator -> builder", "Next Steps:\n1. ", "Delegate this to builder, whose role may do it."} {
		if !strings.Contains(text, want) {
			t.Errorf("role tool deny lacks %q:\n%s", want, text)
		}
	}
	d = e.Decide(warden.ToolCall{Tool: "Bash", Role: "builder", Args: map[string]any{"command": "ls"}}, &engine.Session{First: true}).Decision
	if text := d.ModelText(); d.Code != warden.CodeFirstTool || !strings.Contains(text, "Start the session with one of: read.") {
		t.Errorf("first-tool deny: %s\n%s", d.Code, text)
	}
	d = e.Decide(warden.ToolCall{Tool: "Bash", Role: "builder", Args: map[string]any{"command": "git push --force origin main"}}, nil).Decision
	text = d.ModelText()
	if !strings.Contains(text, "Reason: Force-pushing rewrites shared history.") || !strings.Contains(text, "1. Push without --force.") ||
		!strings.Contains(text, "Rule: no-force") {
		t.Errorf("rule deny:\n%s", text)
	}
	if strings.Contains(text, "**") {
		t.Errorf("the text uses markdown beyond a heading:\n%s", text)
	}
	for _, r := range text {
		if r > 0x2000 {
			t.Errorf("the text holds %q: plain text only", r)
		}
	}
	if d := e.Decide(warden.ToolCall{Tool: "Read", Role: "builder", Args: map[string]any{"file_path": "a.go"}}, nil).Decision; d.Guide != nil {
		t.Errorf("an allow got a guide: %+v", d.Guide)
	}
	// Without the layout: the usual text.
	p.ModelErrors.Layout = ""
	e2, _ := engine.Compile(p, testView())
	d = e2.Decide(warden.ToolCall{Tool: "Bash", Role: "coordinator", Args: map[string]any{"command": "ls"}}, nil).Decision
	if d.Guide != nil || strings.Contains(d.ModelText(), "Agent Role:") {
		t.Errorf("without the layout: %s", d.ModelText())
	}
}

// TestSeedLayoutRefusesOtherValues: model_errors.layout takes plain or seed.
func TestSeedLayoutRefusesOtherValues(t *testing.T) {
	_, fs := policy.Parse(t.TempDir()+"/warden.yaml", []byte("version: 1\nmodel_errors:\n  layout: fancy\n"))
	if len(fs) == 0 || fs[0].Field != "model_errors.layout" {
		t.Errorf("layout fancy: %v", fs)
	}
}
