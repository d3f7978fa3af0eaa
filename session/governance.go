package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

// Data is what governance templates see. A role's `prompt` and `reminder`
// in the policy are text/template sources over Data, with the functions
// join (strings.Join), upper and lower.
type Data struct {
	// Role is the session's role ("" for none) and Description its
	// description from the policy.
	Role        string
	Description string
	// Tools are the tools and kinds the role may use (nil: any); First the
	// tools its session must start with; FirstEnforce warn or deny;
	// MaxDepth its delegation limit (0: none).
	Tools        []string
	First        []string
	FirstEnforce string
	MaxDepth     int
	// Session, Parent and Depth describe the session.
	Session string
	Parent  string
	Depth   int
	// Phase is the project phase ("init" when none is set).
	Phase string
	// Anchors are the critical and high anchors, most important first.
	Anchors []warden.Anchor
	// Hierarchy lists every role of the policy in the order of the chain
	// of delegation (Chain): the roles nobody delegates to first.
	Hierarchy []RoleInfo
	// Chain is the hierarchy on one line, who delegates to whom:
	// "coordinator (you) -> governance -> builder / validator".
	Chain string
	// Rules are the policy's deny, ask and warn rules that apply to the role.
	Rules []RuleInfo
	// Intent is the user's latest request; IntentID the active intent.
	Intent   string
	IntentID string
	// Calls and Violations are the session's counters so far.
	Calls      int
	Violations int
	// Workspace is the folder file tools stay in, Outside the decision for
	// paths beyond it; Protected the globs no agent may write; Safe and
	// Destructive the defaults for calls no rule decides.
	Workspace   string
	Outside     string
	Protected   []string
	Private     []string
	Safe        string
	Destructive string
	// Level is the delegation level the session reads (the policy's
	// governance.levels for its depth), nil when the policy lists none:
	// the state it does not read is left out of the fields above, and
	// Has and Reads say which sections and state it gets.
	Level *policy.Level
	// Files are the level's files: their text at session start, the names
	// only in the reminder.
	Files []FileText
	// History are the project history's latest entries, for a level that
	// reads history.
	History []HistoryInfo
}

// FileText is a level's file as the session-start text carries it.
type FileText struct {
	Name string
	Text string
}

// HistoryInfo is a project history entry as governance text shows it.
type HistoryInfo struct {
	When, Agent, Action, Result string
}

// historyShown is how many of the latest history entries a level that
// reads history gets.
const historyShown = 5

// Has reports whether the session's level gets a section of the built-in
// text (rules, hierarchy, first); without levels, every section.
func (d Data) Has(section string) bool { return d.Level.Has(section) }

// Reads reports whether the session's level reads a state key (phase,
// anchors, intent, history, session).
func (d Data) Reads(key string) bool { return d.Level.Reads(key) }

// RoleInfo is one role in the hierarchy.
type RoleInfo struct {
	Name        string
	Description string
	Tools       []string
	MaxDepth    int
	// Level is the role's place in the chain (0: nobody delegates to it);
	// Delegates the roles it hands work to.
	Level     int
	Delegates []string
	// You marks the session's own role.
	You bool
}

// RuleInfo is one rule as governance text shows it.
type RuleInfo struct {
	ID, Effect, Message, Suggestion string
}

const prefixText = `## WARDEN GOVERNANCE

You are: {{if .Role}}{{.Role}}{{with .Description}} ({{.}}){{end}}{{else}}an agent without a role{{end}}
{{with .Phase}}Current phase: {{.}}
{{end}}Delegation depth: {{.Depth}}{{if .MaxDepth}} (limit {{.MaxDepth}}: you may not delegate at depth {{.MaxDepth}} or deeper){{end}}
{{if .Has "rules"}}
### Rules
{{if .Tools}}- You may use only these tools: {{join .Tools ", "}}. Any other tool is denied.
{{end}}{{range .Rules}}- {{upper .Effect}} {{.ID}}: {{.Message}}{{with .Suggestion}} Instead: {{.}}{{end}}
{{end}}{{if .Workspace}}- Files: work inside {{.Workspace}}; a path outside it {{verb .Outside | trimAre}}.
{{end}}{{if .Private}}- Private (no agent may read or write them, by any tool or command): {{join .Private ", "}}.
{{end}}{{if .Protected}}- Protected (no agent may write, edit or delete): {{join .Protected ", "}}.
{{end}}{{if .Safe}}{{if eq .Safe .Destructive}}- Calls no rule decides {{verb .Safe}}.
{{else}}- Calls no rule decides: reading and listing {{verb .Safe}}; shell commands, writes and other tools {{verb .Destructive}}.
{{end}}{{end}}- A denied call says why and what to do instead: follow the suggestion, do not retry the same call.
- A call that needs approval is held for a human: the answer names the approval and the commands the user runs to answer it. Stop, tell the user, and retry exactly the same call once they answered; do not work around it.
{{end}}{{if and .Hierarchy (.Has "hierarchy")}}
### Hierarchy (who delegates to whom)
{{.Chain}}
{{range .Hierarchy}}- {{.Name}}{{if .You}} (you){{end}}{{if or .Description .Delegates}}:{{end}}{{with .Description}} {{.}}{{end}}{{with .Delegates}} Delegates to: {{join . ", "}}.{{end}}
{{end}}{{end}}{{if and .First (.Has "first")}}
### Required first action
Use {{join .First " or "}} before any other tool.{{if eq .FirstEnforce "deny"}} Any other first call is denied.{{end}}
{{end}}{{if .Level}}{{if .Anchors}}
### Anchors (critical and high)
{{range .Anchors}}- [{{upper .Priority}}] {{.Content}}
{{end}}{{end}}{{with .IntentID}}
Active intent: {{.}}
{{end}}{{if .History}}
### Recent project history
{{range .History}}- {{.When}}{{with .Agent}} {{.}}{{end}}: {{.Action}}{{with .Result}} ({{.}}){{end}}
{{end}}{{end}}{{range .Files}}
### File {{.Name}}
{{.Text}}
{{end}}{{end}}`

const reminderText = `## WARDEN REMINDER (after context compaction)

You are: {{if .Role}}{{.Role}}{{with .Description}} ({{.}}){{end}}{{else}}an agent without a role{{end}}
{{with .Phase}}Current phase: {{.}}
{{end}}{{with .Intent}}The user's latest request: {{.}}
{{end}}{{if .Reads "anchors"}}
### Anchors (critical and high, they survived compaction)
{{range .Anchors}}- [{{upper .Priority}}] {{.Content}}
{{else}}- No active anchors
{{end}}{{end}}{{if and .Hierarchy (.Has "hierarchy")}}
### Hierarchy (who delegates to whom)
{{.Chain}}
{{range .Hierarchy}}- {{.Name}}{{if .You}} (you){{end}}{{if or .Description .Delegates}}:{{end}}{{with .Description}} {{.}}{{end}}{{with .Delegates}} Delegates to: {{join . ", "}}.{{end}}
{{end}}{{end}}{{if and .Tools (.Has "rules")}}
You may use only: {{join .Tools ", "}}.
{{end}}{{if and .First (.Has "first")}}Resume with {{join .First " or "}}.
{{end}}{{with .Files}}Files given at session start (read them again if you need them):{{range .}} {{.Name}}{{end}}
{{end}}`

const resumeText = `## WARDEN: SESSION RESUMED

You are resuming session {{.Session}}{{if .Role}} as {{.Role}}{{end}}.{{with .Phase}} Current phase: {{.}}.{{end}}
{{if .Reads "session"}}So far: {{.Calls}} tool calls, {{.Violations}} violations.{{end}}{{with .Intent}}
The user's latest request: {{.}}{{end}}
{{if .Anchors}}
### Anchors
{{range .Anchors}}- [{{upper .Priority}}] {{.Content}}
{{end}}{{end}}`

var funcs = policy.TemplateFuncs

var (
	defaultPrefix   = template.Must(template.New("prefix").Funcs(funcs).Parse(prefixText))
	defaultReminder = template.Must(template.New("reminder").Funcs(funcs).Parse(reminderText))
	defaultResume   = template.Must(template.New("resume").Funcs(funcs).Parse(resumeText))
)

// NewData assembles the template data for a session from the policy and the
// project state.
func NewData(p *policy.Policy, s warden.Session, st warden.ProjectState) Data {
	d := Data{Role: s.Role, Session: s.ID, Parent: s.Parent, Depth: s.Depth, Phase: st.Phase,
		Intent: warden.RedactString(s.Intent), IntentID: s.IntentID, Calls: s.Calls, Violations: s.Violations}
	if d.Phase == "" {
		d.Phase = "init"
	}
	for _, a := range st.Anchors {
		if a.Priority == warden.Critical || a.Priority == warden.High {
			d.Anchors = append(d.Anchors, a)
		}
	}
	if p == nil {
		return d
	}
	d.Workspace, d.Outside = "the project folder (where "+filepath.Base(p.File)+" is)", string(p.Workspace.Outside)
	if rel, err := filepath.Rel(p.Dir, p.Workspace.Root); err == nil && rel != "." {
		d.Workspace = "the folder " + filepath.ToSlash(rel) + " (relative to " + filepath.Base(p.File) + ")"
	}
	if d.Outside == "" {
		d.Outside = "deny"
	}
	for _, g := range p.Protected {
		// The policy file and the store are always protected; the globs
		// the policy names are what the agent needs to know.
		if g != p.File && !strings.HasSuffix(g, ".warden/**") {
			d.Protected = append(d.Protected, g)
		}
	}
	d.Private = p.Private
	d.Safe, d.Destructive = string(p.Default.Safe), string(p.Default.Destructive)
	if r := p.Roles[s.Role]; r != nil {
		d.Description, d.Tools, d.First, d.MaxDepth = r.Description, r.Tools, r.First, r.MaxDepth
		d.FirstEnforce = r.FirstEnforce
		if d.FirstEnforce == "" {
			d.FirstEnforce = "warn"
		}
	}
	var levels []string
	for l, names := range p.Chain() {
		var shown []string
		for _, n := range names {
			r := p.Roles[n]
			d.Hierarchy = append(d.Hierarchy, RoleInfo{Name: n, Description: r.Description, Tools: r.Tools,
				MaxDepth: r.MaxDepth, Level: l, Delegates: p.DelegatesOf(n), You: n == s.Role})
			if n == s.Role {
				n += " (you)"
			}
			shown = append(shown, n)
		}
		levels = append(levels, strings.Join(shown, " / "))
	}
	d.Chain = strings.Join(levels, " -> ")
	for _, r := range p.Rules {
		if r.Effect == "allow" || r.Message == "" {
			continue
		}
		if !r.AppliesTo(s.Role) {
			continue
		}
		d.Rules = append(d.Rules, RuleInfo{ID: r.ID, Effect: r.Effect, Message: r.Message, Suggestion: r.Suggestion})
	}
	d.level(p.LevelFor(s.Depth), st)
	return d
}

// level leaves out of d the state the session's level does not read, and
// adds what it reads beyond the built-in text: the history's latest
// entries and the names of its files (render reads their text).
func (d *Data) level(l *policy.Level, st warden.ProjectState) {
	if l == nil {
		return
	}
	d.Level = l
	if !l.Reads("phase") {
		d.Phase = ""
	}
	if !l.Reads("anchors") {
		d.Anchors = nil
	}
	if !l.Reads("intent") {
		d.Intent, d.IntentID = "", ""
	}
	if !l.Reads("session") {
		d.Calls, d.Violations = 0, 0
	}
	if l.Reads("history") {
		h := st.History
		if len(h) > historyShown {
			h = h[len(h)-historyShown:]
		}
		for _, e := range h {
			d.History = append(d.History, HistoryInfo{When: e.Time.UTC().Format("2006-01-02 15:04"),
				Agent: e.Agent, Action: warden.RedactString(e.Action), Result: warden.RedactString(e.Result)})
		}
	}
	for _, f := range l.Files {
		d.Files = append(d.Files, FileText{Name: f.Name})
	}
}

// readLevelFiles fills in the text of the level's files, checked again as
// the policy's loader checked them (a file that is gone, was made a link
// out of the workspace or is private now fails the text; it never gives
// the model what it may not read).
func readLevelFiles(p *policy.Policy, d *Data) error {
	if d.Level == nil {
		return nil
	}
	for i, f := range d.Level.Files {
		if err := p.CheckLevelFile(f); err != nil {
			return fmt.Errorf("%s: governance.levels.%d.files: %w", f.Pos, d.Level.Depth, err)
		}
		fh, err := os.Open(f.Path)
		if err != nil {
			return fmt.Errorf("%s: governance.levels.%d.files: %w", f.Pos, d.Level.Depth, err)
		}
		data, err := io.ReadAll(io.LimitReader(fh, policy.LevelFileMax+1))
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: governance.levels.%d.files: %w", f.Pos, d.Level.Depth, err)
		}
		text := strings.TrimRight(string(data), "\n")
		if len(data) > policy.LevelFileMax {
			text = strings.ToValidUTF8(string(data[:policy.LevelFileMax]), "") + "\n[the rest of " + f.Name + " is left out: read the file itself]"
		}
		d.Files[i].Text = warden.RedactString(text)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Prefix renders the session-start governance text for the session's role:
// its rules, the hierarchy, the required first action and the current phase.
// A role's `prompt` in the policy replaces the built-in text.
func Prefix(p *policy.Policy, s warden.Session, st warden.ProjectState) (string, error) {
	return render(p, s, st, "prompt", defaultPrefix)
}

// Reminder renders the post-compaction reminder: the role, the phase, the
// critical and high anchors and the hierarchy. A role's `reminder` in the
// policy replaces the built-in text.
func Reminder(p *policy.Policy, s warden.Session, st warden.ProjectState) (string, error) {
	return render(p, s, st, "reminder", defaultReminder)
}

// ResumeNote renders the note for a resumed session: what it did so far,
// the phase, the anchors.
func ResumeNote(p *policy.Policy, s warden.Session, st warden.ProjectState) (string, error) {
	return render(p, s, st, "", defaultResume)
}

// CheckTemplates parses every role's prompt and reminder template and
// renders it once with sample data, so that a broken template is reported
// when the policy is checked rather than at session start.
func CheckTemplates(p *policy.Policy) error {
	// At each level's depth too: a level leaves fields empty.
	depths := []int{0}
	for _, l := range p.Governance.Levels {
		depths = append(depths, l.Depth)
	}
	for name := range p.Roles {
		for _, depth := range depths {
			s := warden.Session{ID: "check", Role: name, Depth: depth}
			if _, err := Prefix(p, s, warden.ProjectState{}); err != nil {
				return err
			}
			if _, err := Reminder(p, s, warden.ProjectState{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func render(p *policy.Policy, s warden.Session, st warden.ProjectState, field string, def *template.Template) (string, error) {
	tpl := def
	if p != nil && field != "" {
		if r := p.Roles[s.Role]; r != nil {
			src := r.Prompt
			if field == "reminder" {
				src = r.Reminder
			}
			if src != "" {
				t, err := template.New(s.Role + "." + field).Funcs(funcs).Option("missingkey=error").Parse(src)
				if err != nil {
					return "", fmt.Errorf("%s: role %q %s: %w", r.Pos, s.Role, field, err)
				}
				tpl = t
			}
		}
	}
	data := NewData(p, s, st)
	if def == defaultPrefix {
		if err := readLevelFiles(p, &data); err != nil {
			return "", err
		}
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, data); err != nil {
		where := "built-in " + def.Name()
		if tpl != def {
			where = fmt.Sprintf("%s: role %q %s", p.Roles[s.Role].Pos, s.Role, field)
		}
		return "", fmt.Errorf("%s: %w", where, err)
	}
	return Plain(b.String()), nil
}

// Plain makes text safe for terminal hosts (docs/policy.md, "What the model reads")
// with warden.TerminalSafe, and ends it with one newline.
func Plain(s string) string {
	return strings.TrimRight(warden.TerminalSafe(s), "\n") + "\n"
}
