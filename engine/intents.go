package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// intentSet is the active intents file, read once at compile time
// (.orchestration/active_intents.yaml by default; docs/policy.md, "Intents").
type intentSet struct {
	file string
	byID map[string]*intent
	err  error // the file exists but cannot be read: intent checks deny
}

type intent struct {
	ID    string
	Name  string
	incl  []pathGlob
	excl  []pathGlob
	scope []string
}

type intentsFile struct {
	ActiveIntents []struct {
		ID         string   `yaml:"id"`
		Name       string   `yaml:"name"`
		Status     string   `yaml:"status"`
		OwnedScope []string `yaml:"owned_scope"`
	} `yaml:"active_intents"`
}

func loadIntents(file string, e *Engine) (*intentSet, error) {
	set := &intentSet{file: file, byID: map[string]*intent{}}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return set, nil // no intents yet: every id is not found
	}
	if err != nil {
		set.err = err
		return set, nil
	}
	var f intentsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		set.err = fmt.Errorf("%s: %v", file, strings.TrimPrefix(err.Error(), "yaml: "))
		return set, nil
	}
	for i, a := range f.ActiveIntents {
		if a.ID == "" {
			set.err = fmt.Errorf("%s: active_intents[%d] has no id", file, i)
			return set, nil
		}
		in := &intent{ID: a.ID, Name: a.Name, scope: a.OwnedScope}
		for _, s := range a.OwnedScope {
			excl := strings.HasPrefix(s, "!")
			g, err := e.compilePath(strings.TrimPrefix(s, "!"))
			if err != nil {
				set.err = fmt.Errorf("%s: intent %s: owned_scope %q: %v", file, a.ID, s, err)
				return set, nil
			}
			if excl {
				in.excl = append(in.excl, g)
			} else {
				in.incl = append(in.incl, g)
			}
		}
		set.byID[a.ID] = in
	}
	return set, nil
}

// owns reports whether a path is inside the intent's owned scope:
// exclusions win; with no inclusions everything not excluded is in scope.
func (in *intent) owns(abs, rel string, inside bool) bool {
	for _, g := range in.excl {
		if g.match(abs, rel, inside) {
			return false
		}
	}
	if len(in.incl) == 0 {
		return true
	}
	for _, g := range in.incl {
		if g.match(abs, rel, inside) {
			return true
		}
	}
	return false
}

func (g pathGlob) match(abs, rel string, inside bool) bool {
	if g.abs {
		return g.g.Match(strings.TrimPrefix(abs, "/"))
	}
	return inside && g.g.Match(rel)
}
