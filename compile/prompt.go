package compile

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/warden-run/warden/policy"
)

// systemPrompt tells the model what warden rules are. Plain text, no
// markup the model could copy into messages.
const systemPrompt = `You translate one plain-language rule into rules for warden. warden decides every tool call an AI agent makes: allow it, ask a human, or deny it. Answer with JSON only, following the given schema.

A rule matches a call when every matcher it has matches; an empty matcher matches everything.
- tool: tool kinds (shell, read, write, edit, delete, list, fetch, delegate, todo, intent, other), which match the tools of every agent host; tool names as the agent calls them (gmail.send), compared exactly, so a host's own name such as Bash matches that host only (use the kind shell instead); globs (mcp__github__*) or /regex/.
- command: shell command patterns, only for shell tools. * matches any run of characters; a pattern ending in " *" also matches the bare command. Flag spellings are equivalent (rm -rf, rm -fr, rm -r -f). Example: "git push --force *".
- path: gitignore-style globs on file paths relative to the workspace: ** crosses folders, * does not, a leading ! excludes.
- args: globs on top-level string arguments, each a name and a glob, for example name "folder" and glob "Spam*". A glob that starts with ! matches a value the rest does not match: "!*@example.com" is any address outside example.com. A missing argument matches neither form.
- intent: a regular expression on the user's request text.
- roles: the agent roles the rule applies to; empty means every role.

Effects: deny blocks the call; ask needs a human; allow permits it; warn permits it with a warning. When several rules match, deny beats ask and ask beats allow, so an allow never overrides a deny or an ask. Calls no rule matches get the policy's default.
A deny needs a message (why) and a suggestion (what to do instead); a warn needs a message. Write them as short plain sentences addressed to the agent, without emoji.
Use as few rules as the sentence needs, and make none broader than the sentence says. Every condition the sentence states (an address or domain, a path, a file, a command, a role) must be a matcher of a rule: a rule without it would cover calls the sentence does not speak of. A message states only what its rule checks. A sentence that asks for the user's approval ("ask me", "without asking", "needs my approval") becomes ask rules, never allow or warn: leave the calls it does not cover to the default. Rule ids are lowercase words joined by hyphens and must not repeat an id the policy already uses.

For every rule write tests: at least one of kind "catch" (a realistic call the rule must match) and at least one of kind "near_miss" (a similar call the rule must not match). When the rule has a condition on the call (command, path, args or intent), at least one near miss calls the same tool and differs only where the condition leaves it out (the same gmail.send to an address inside example.com), so that the test shows the condition. expect is the decision the whole policy gives the call, default included. Test call args are name and value pairs: command for shell tools, file_path for file tools, and the tool's own argument names otherwise. Leave role and intent empty unless the rule needs them.`

func (c *compiler) userPrompt(s Source) string {
	var b strings.Builder
	b.WriteString("The policy the new rules join:\n")
	b.WriteString(c.polSummary)
	if len(c.rules) > 0 {
		b.WriteString("Rules compiled in this run so far:\n")
		for _, r := range c.rules {
			fmt.Fprintf(&b, "- %s\n", ruleLine(r.ID, r.Effect, r.Tool, r.Command, r.Path, r.Args, r.Intent, r.Roles))
		}
	}
	// The file's base name only: local paths are not the model's business.
	fmt.Fprintf(&b, "\nThe plain-language rule (%s line %d):\n%s\n", filepath.Base(s.File), s.Line, s.Text)
	return b.String()
}

func repairPrompt(problems []string) string {
	var b strings.Builder
	b.WriteString("Your answer has these problems:\n")
	for _, p := range problems {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	b.WriteString("Answer again with the complete corrected JSON for the same plain-language rule.")
	return b.String()
}

// summary describes the current policy for the model: default, tools,
// roles, protected paths and the rules written by hand.
func summary(p *policy.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Default: safe calls (kinds read, list, todo, intent) %s; every other call %s.\n", p.Default.Safe, p.Default.Destructive)
	if len(p.Tools) > 0 {
		var ts []string
		for _, k := range sortedKeys(p.Tools) {
			ts = append(ts, fmt.Sprintf("%s (%s)", k, p.Tools[k]))
		}
		fmt.Fprintf(&b, "Tools the policy names, with their kinds: %s.\n", strings.Join(ts, ", "))
	}
	b.WriteString("Built-in tool names include Bash (shell, arg command), Read, Write, Edit (file tools, arg file_path), and filesystem.write, write_file, edit_file.\n")
	if len(p.Roles) > 0 {
		b.WriteString("Roles:\n")
		names := make([]string, 0, len(p.Roles))
		for n := range p.Roles {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := p.Roles[n]
			tools := "any tool"
			if r.Tools != nil {
				tools = strings.Join(r.Tools, ", ")
			}
			fmt.Fprintf(&b, "- %s: may use %s", n, tools)
			if r.Description != "" {
				fmt.Fprintf(&b, " (%s)", r.Description)
			}
			b.WriteString("\n")
		}
	}
	if len(p.Protected) > 0 {
		fmt.Fprintf(&b, "Protected paths (always denied for writes): %s\n", strings.Join(p.Protected, ", "))
	}
	if len(p.Private) > 0 {
		fmt.Fprintf(&b, "Private paths (agents may not read them): %s\n", strings.Join(p.Private, ", "))
	}
	var hand []*policy.Rule
	for _, r := range p.Rules {
		if r.Source == "" {
			hand = append(hand, r)
		}
	}
	if len(hand) > 0 {
		b.WriteString("Rules written by hand (keep them; do not reuse their ids):\n")
		for _, r := range hand {
			fmt.Fprintf(&b, "- %s\n", ruleLine(r.ID, r.Effect, r.Tool, r.Command, r.Path, r.Args, r.Intent, r.Roles))
		}
	}
	return b.String()
}

func ruleLine(id, effect string, tool, command, path []string, args map[string]string, intent string, roles []string) string {
	s := fmt.Sprintf("%s: %s", id, effect)
	if len(tool) > 0 {
		s += " tool " + strings.Join(tool, ", ")
	}
	if len(command) > 0 {
		s += fmt.Sprintf(" command %q", command)
	}
	if len(path) > 0 {
		s += fmt.Sprintf(" path %q", path)
	}
	for _, k := range sortedKeys(args) {
		s += fmt.Sprintf(" arg %s=%q", k, args[k])
	}
	if intent != "" {
		s += fmt.Sprintf(" intent %q", intent)
	}
	if len(roles) > 0 {
		s += " roles " + strings.Join(roles, ", ")
	}
	return s
}
