package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
)

// A compiled rule must mean what its sentence says, and its tests must show
// it. The model's own tests cannot show a condition the model left out: a
// rule that asks on every gmail.send passes a catch test of an outside
// address and a near miss on gmail.draft, although the sentence spoke of
// addresses outside example.com. So the answer is also held to what can be
// read from the sentence itself (meaningProblems):
//
//   - every value the sentence names (a domain or an address, a path, a file
//     name, quoted text) reaches a matcher of one of its rules;
//   - a rule's message names only values the rule checks;
//   - a rule with a condition on the call (command, path, args or intent) has a
//     near miss on a tool it covers, so that the test fails when the
//     condition is missing or wrong;
//   - a sentence that asks for the user's approval, and permits nothing,
//     never becomes an allow or a warn, under any default (seed 004: "ask
//     me" is never "allow").

// askMeRE finds a sentence that asks for a human's approval.
var askMeRE = regexp.MustCompile(`(?i)\b(ask(?:ing)? (?:me|the user|a human|first|before)|without (?:asking|approval|my approval|the user's approval|permission|my permission|confirmation|my confirmation|checking with me)|(?:needs?|requires?|required|with|get|after) (?:my |the user's |a human's |explicit |prior )?(?:approval|confirmation|permission|ok)|confirm(?:ing)? with (?:me|the user)|check(?:ing)? with (?:me|the user)|approved by (?:me|the user|a human))\b`)

// mayRE finds a sentence that also permits something ("mail to example.com
// is fine; ask before mailing anyone else"): its allow rules are its own.
var mayRE = regexp.MustCompile(`(?i)\b((?:is|are) (?:fine|ok|okay|allowed|permitted)|may|can|allow(?:ed|s)?|freely)\b`)

// valueREs find the values a sentence or a message names.
var valueREs = []*regexp.Regexp{
	regexp.MustCompile("`([^`]+)`"),
	regexp.MustCompile(`"([^"]+)"`),
	// An address or a domain (example.com, a@b.org) or a file name with an
	// extension (rules.json, main.go).
	regexp.MustCompile(`(?i)(?:^|[\s(,])((?:[a-z0-9._%+-]+@)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.[a-z][a-z0-9]{0,9})\b`),
	// A path: a word with a slash (src/auth, .config/x, /etc/passwd).
	regexp.MustCompile(`(?:^|[\s(,])([~./A-Za-z0-9_*-]*/[~./A-Za-z0-9_*-]+)`),
}

// namedValues returns the values text names, lowercased, each once, with
// trailing punctuation and slashes dropped.
func namedValues(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, re := range valueREs {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			v := strings.ToLower(strings.Trim(m[1], ".,;:!?)/ "))
			if len(v) < 3 || seen[v] || strings.Count(v, " ") > 3 {
				continue
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// matcherText is every matcher of a rule, lowercased, for finding values in.
func matcherText(r yamlRule) string {
	var parts []string
	parts = append(parts, r.Tool...)
	parts = append(parts, r.Command...)
	parts = append(parts, r.Path...)
	for k, v := range r.Args {
		parts = append(parts, k, v)
	}
	parts = append(parts, r.Intent)
	parts = append(parts, r.Roles...)
	return strings.ToLower(strings.Join(parts, "\n"))
}

// checks reports whether a matcher text checks value: it holds it, or (for
// a path or file) holds it with its leading "./", "~/" or "/" dropped.
func checks(matchers, value string) bool {
	v := strings.TrimLeft(strings.TrimPrefix(value, "~/"), "./")
	if strings.Contains(matchers, value) || v != "" && strings.Contains(matchers, v) {
		return true
	}
	// A glob that takes the value in: "**/rules*.json" checks rules.json.
	for _, m := range strings.Split(matchers, "\n") {
		m = strings.TrimPrefix(m, "!")
		if strings.ContainsAny(m, "*?") && (glob.Text(m, v) || glob.Text(m, "x/"+v) || glob.Text(m, v+"/x")) {
			return true
		}
	}
	return false
}

// conditional reports whether a rule narrows its tools with a condition on
// the call (roles narrow who calls, and are shown by a test of that role).
func conditional(r yamlRule) bool {
	return len(r.Command) > 0 || len(r.Path) > 0 || len(r.Args) > 0 || r.Intent != ""
}

// coversTool reports whether a rule's tool matcher takes in tool (kind is
// the tool's kind in the policy): a kind, a name, a glob or a /regex/, as
// the engine compares them; no tool matcher takes in every tool.
func coversTool(r yamlRule, tool, kind string) bool {
	if len(r.Tool) == 0 {
		return true
	}
	for _, t := range r.Tool {
		switch {
		case len(t) > 1 && t[0] == '/' && t[len(t)-1] == '/':
			if re, err := regexp.Compile(t[1 : len(t)-1]); err == nil && re.MatchString(tool) {
				return true
			}
		case policy.IsKind(t):
			if t == kind {
				return true
			}
		case strings.ContainsAny(t, "*?"):
			if glob.Text(t, tool) {
				return true
			}
		case t == tool:
			return true
		}
	}
	return false
}

// meaningProblems holds the rules compiled from sentence s to what can be
// read from the sentence; nearTools are the tools of each rule's near-miss
// tests, by rule id.
func meaningProblems(p *policy.Policy, s string, rules []yamlRule, nearTools map[string][]string) []string {
	var problems []string
	all := ""
	for _, r := range rules {
		all += matcherText(r) + "\n"
	}
	for _, v := range namedValues(s) {
		if !checks(all, v) {
			problems = append(problems, fmt.Sprintf("the sentence names %q, but no rule checks it: express that condition in the rule (args, for example a glob such as \"*@%s\" or \"!*@%s\" on the argument that holds it; path; command; or intent), and add a near_miss test on the same tool that the condition leaves out", v, v, v))
		}
	}
	ask := askMeRE.FindString(s)
	if mayRE.MatchString(s) {
		ask = "" // it permits too: its allow rules say what it permits
	}
	for i, r := range rules {
		where := fmt.Sprintf("rules[%d] (%s)", i, r.ID)
		mine := matcherText(r)
		// A value of the sentence in the message is a claim about the
		// call: the rule must check it. (Other values, such as a tool to
		// use instead, claim nothing about the call.)
		for _, v := range namedValues(r.Message) {
			if checks(strings.ToLower(s), v) && !checks(mine, v) {
				problems = append(problems, fmt.Sprintf("%s: the message says %q, which this rule does not check; the message may only state what the rule checks", where, v))
			}
		}
		if ask != "" && (r.Effect == "allow" || r.Effect == "warn") {
			problems = append(problems, fmt.Sprintf("%s: the sentence asks for the user's approval (%q), so no rule compiled from it may %s; use effect ask for what needs approval, and leave the rest to the policy's default", where, ask, r.Effect))
		}
		if conditional(r) {
			ok := false
			for _, t := range nearTools[r.ID] {
				ok = ok || coversTool(r, t, p.KindOf(t))
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: the rule has a condition (command, path, args or intent), but no near_miss test calls a tool the rule covers, so no test shows the condition; add a near_miss on %s that the condition leaves out", where, strings.Join(r.Tool, " or ")))
			}
		}
	}
	return problems
}
