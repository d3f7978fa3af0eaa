package compile

import (
	"fmt"
	"strings"

	"github.com/warden-run/warden/policy"
)

// Check verifies, without asking any model, that the compiled rules of the
// policy still match their sources: the plain-language rules file (rulesFile,
// or the compiled: section's from when empty) hashes to the recorded
// sources hash, every rule in it has compiled rules and no compiled rule
// has a source that is gone, and the compiled rules and their tests hash to
// the recorded rules hash (nobody edited them by hand). It is meant for CI.
func Check(policyFile, rulesFile string) error {
	p, err := policy.Load(policyFile)
	if err != nil {
		return err
	}
	if p.Compiled == nil {
		return fmt.Errorf("%s has no compiled: section; run warden compile RULES.md --write first", p.File)
	}
	if rulesFile == "" {
		rulesFile = p.Compiled.From
	}
	srcs, err := ReadSources(rulesFile)
	if err != nil {
		return err
	}
	var probs []string
	have := map[string]bool{}
	for _, r := range p.Rules {
		if r.Source != "" {
			have[r.Source] = true
		}
	}
	want := map[string]bool{}
	for _, s := range srcs {
		want[s.Text] = true
		if !have[s.Text] {
			probs = append(probs, fmt.Sprintf("%s: %q has no compiled rule", s, s.Text))
		}
	}
	for _, r := range p.Rules {
		if r.Source != "" && !want[r.Source] {
			probs = append(probs, fmt.Sprintf("%s: rule %s was compiled from %q, which %s no longer has", r.Pos, r.ID, r.Source, rulesFile))
		}
	}
	if h := SourcesHash(srcs); h != p.Compiled.Sources {
		probs = append(probs, fmt.Sprintf("%s changed since the last compile (its rules hash to %s, the policy records %s)", rulesFile, h, p.Compiled.Sources))
	}
	if h := RulesHash(p); h != p.Compiled.Rules {
		probs = append(probs, fmt.Sprintf("%s: the compiled rules or their tests were edited after compiling (they hash to %s, the policy records %s); change %s instead", p.File, h, p.Compiled.Rules, rulesFile))
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s\nrun warden compile %s --write to compile again", strings.Join(probs, "\n"), rulesFile)
	}
	return nil
}
