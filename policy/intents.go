package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Intent is one entry of the active intents file (docs/policy.md, Intents;
// .orchestration/active_intents.yaml).
type Intent struct {
	ID     string
	Name   string
	Status string
	// OwnedScope are the globs the intent may write (`!` excludes). Empty
	// means nothing is in scope.
	OwnedScope []string
	// Constraints and AcceptanceCriteria are told to the model when it
	// selects the intent.
	Constraints        []string
	AcceptanceCriteria []string
	Pos                Pos
}

type intentsDoc struct {
	ActiveIntents []struct {
		ID                 string   `yaml:"id"`
		Name               string   `yaml:"name"`
		Status             string   `yaml:"status"`
		OwnedScope         []string `yaml:"owned_scope"`
		Constraints        []string `yaml:"constraints"`
		AcceptanceCriteria []string `yaml:"acceptance_criteria"`
	} `yaml:"active_intents"`
}

// ReadIntents reads an intents file: its intents in file order, and
// warnings (an intent without owned_scope, which owns nothing). A file that
// does not exist has no intents; one that cannot be read or decoded, or an
// intent without an id, is an error naming the file and line.
func ReadIntents(file string) ([]Intent, []Finding, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return ParseIntents(file, data)
}

// ParseIntents decodes an intents file's data (see ReadIntents).
func ParseIntents(file string, data []byte) ([]Intent, []Finding, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %s", yamlErrPos(file, err), yamlErrMsg(err))
	}
	if len(doc.Content) == 0 {
		return nil, nil, nil
	}
	var f intentsDoc
	if err := doc.Content[0].Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%s: %s", yamlErrPos(file, err), yamlErrMsg(err))
	}
	// The entries' nodes, for positions.
	var items []*yaml.Node
	if root := resolve(doc.Content[0]); root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "active_intents" {
				items = resolve(root.Content[i+1]).Content
			}
		}
	}
	var out []Intent
	var findings []Finding
	for i, a := range f.ActiveIntents {
		pos := Pos{File: file, Line: 1, Col: 1}
		var item *yaml.Node
		if i < len(items) {
			item = resolve(items[i])
			pos = Pos{File: file, Line: item.Line, Col: item.Column}
		}
		if a.ID == "" {
			return nil, nil, fmt.Errorf("%s: active_intents[%d] has no id", pos, i)
		}
		in := Intent{ID: a.ID, Name: a.Name, Status: a.Status, OwnedScope: a.OwnedScope,
			Constraints: a.Constraints, AcceptanceCriteria: a.AcceptanceCriteria, Pos: pos}
		if len(a.OwnedScope) == 0 {
			at := pos
			if n := fieldNode(item, "owned_scope"); n != nil {
				at = Pos{File: file, Line: n.Line, Col: n.Column}
			}
			findings = append(findings, Finding{Pos: at, Severity: SevWarning, Field: fmt.Sprintf("active_intents[%d].owned_scope", i),
				Message: fmt.Sprintf("intent %s owns nothing (no owned_scope): every write it needs is out of scope; list the globs it may write, such as [\"src/auth/**\"]", a.ID)})
		} else if none := ownsNothing(a.OwnedScope); none != "" {
			at := pos
			if n := fieldNode(item, "owned_scope"); n != nil {
				at = Pos{File: file, Line: n.Line, Col: n.Column}
			}
			findings = append(findings, Finding{Pos: at, Severity: SevWarning, Field: fmt.Sprintf("active_intents[%d].owned_scope", i),
				Message: fmt.Sprintf("intent %s owns nothing: %s, so every write it needs is out of scope", a.ID, none)})
		}
		out = append(out, in)
	}
	return out, findings, nil
}

// fieldNode returns the value node of key in a mapping node, or nil.
func fieldNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// IntentList lists intents for the model: "INT-001 (JWT migration), INT-002".
func IntentList(list []Intent) string {
	var b strings.Builder
	for i, in := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in.ID)
		if in.Name != "" {
			b.WriteString(" (" + in.Name + ")")
		}
	}
	return b.String()
}

// ownsNothing says why a non-empty owned_scope owns nothing, or "": every
// entry is empty, or every inclusion is also excluded word for word (a
// scope of only exclusions owns everything but them).
func ownsNothing(scope []string) string {
	excl := map[string]bool{}
	var incl []string
	for _, s := range scope {
		s = strings.TrimSpace(s)
		switch {
		case s == "" || s == "!":
		case strings.HasPrefix(s, "!"):
			excl[strings.TrimPrefix(s, "!")] = true
		default:
			incl = append(incl, s)
		}
	}
	if len(incl) == 0 && len(excl) == 0 {
		return "its owned_scope has only empty entries"
	}
	for _, s := range incl {
		if !excl[s] {
			return ""
		}
	}
	if len(incl) == 0 {
		return ""
	}
	return "every glob it includes is also excluded (exclusions win)"
}
