package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/warden-run/warden/policy"
)

// intentSet is the active intents file, read once at compile time
// (.orchestration/active_intents.yaml by default; docs/policy.md, "Intents").
type intentSet struct {
	file string
	list []policy.Intent // in file order
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

func loadIntents(file string, e *Engine) (*intentSet, error) {
	set := &intentSet{file: file, byID: map[string]*intent{}}
	data, err := e.ws.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return set, nil // no intents yet: every id is not found
	}
	if err != nil {
		set.err = err
		return set, nil
	}
	list, _, err := policy.ParseIntents(file, data)
	if err != nil {
		set.err = err
		return set, nil
	}
	for _, a := range list {
		in := &intent{ID: a.ID, Name: a.Name, scope: a.OwnedScope}
		for _, s := range a.OwnedScope {
			excl := strings.HasPrefix(s, "!")
			g, err := e.compilePath(strings.TrimPrefix(s, "!"))
			if err != nil {
				set.err = fmt.Errorf("%s: intent %s: owned_scope %q: %v", a.Pos, a.ID, s, err)
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
	set.list = list
	return set, nil
}

// Intents returns the active intents as the engine read them at compile
// time, in file order, and the error that makes every intent check deny
// (an intents file that cannot be read or decoded). A policy without an
// intents section has none.
func (e *Engine) Intents() ([]policy.Intent, error) {
	if e.intents == nil {
		return nil, nil
	}
	return e.intents.list, e.intents.err
}

// owns reports whether a path is inside the intent's owned scope:
// exclusions win, and only what an inclusion matches is in scope. An
// intent without owned_scope owns nothing; one whose owned_scope lists only
// exclusions owns everything inside the workspace but them (seed 002: no
// inclusions means everything except the exclusions).
func (in *intent) owns(abs, rel string, inside bool) bool {
	for _, g := range in.excl {
		if g.match(abs, rel, inside) {
			return false
		}
	}
	if len(in.incl) == 0 {
		return len(in.excl) > 0 && inside
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
		p := strings.TrimPrefix(abs, "/")
		return g.g.Match(p) || g.fold != nil && hasUpper(p) && g.fold.Match(foldLower(p))
	}
	return inside && (g.g.Match(rel) || g.fold != nil && hasUpper(rel) && g.fold.Match(foldLower(rel)))
}

// hasUpper reports whether s has a letter lowering could change (an ASCII
// capital or any byte beyond ASCII).
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c >= 0x80 {
			return true
		}
	}
	return false
}

// intentIDs lists the active intents' ids, "INT-001 (JWT migration),
// INT-002", for the text that sends the model to select one.
func (e *Engine) intentIDs() string {
	if e.intents == nil {
		return ""
	}
	return policy.IntentList(e.intents.list)
}
