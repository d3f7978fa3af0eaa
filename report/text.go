package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The texts in this file are model-facing: plain text, markdown headings at
// most. Each one that mentions the final report also gives the metadata
// guidance of every plugin, so a runtime that injects them
// can never show the one without the other.

// Instructions returns the system-prompt text of the output contract: how to
// write the final report and, for each plugin, its full instruction, its
// META block and its schema, then an example of a complete final answer.
func (s *Session) Instructions() string {
	var b strings.Builder
	t := s.tags
	b.WriteString("## Final report\n\n")
	b.WriteString("When your work is done, give your final answer inside a final report block, exactly once:\n\n")
	fmt.Fprintf(&b, "%s\nyour final report\n%s\n\n", t.OpenFinal(), t.CloseFinal())
	b.WriteString("Text outside this block is not shown to the user.\n")
	if len(s.plugins) > 0 {
		b.WriteString("\n## Required metadata\n\n")
		fmt.Fprintf(&b, "Your final answer is accepted only together with one metadata block for each of these plugins: %s. ", s.nameList())
		b.WriteString("Each block holds one JSON object that satisfies the plugin's schema. ")
		b.WriteString("Put the blocks after the final report block (before it also works). The metadata is not shown to the user.\n")
		for _, p := range s.plugins {
			fmt.Fprintf(&b, "\n### Plugin %q\n\n", p.name)
			b.WriteString(strings.TrimSpace(p.req.Instruction))
			b.WriteString("\n\n")
			b.WriteString(s.metaBlock(p, true))
			b.WriteString("\nSchema:\n")
			b.WriteString(compactJSON(p.req.Schema))
			b.WriteString("\n")
		}
	}
	b.WriteString("\n## Example of a complete final answer\n\n")
	fmt.Fprintf(&b, "%s\nyour final report\n%s\n", t.OpenFinal(), t.CloseFinal())
	for _, p := range s.plugins {
		b.WriteString(s.metaBlock(p, false))
	}
	return b.String()
}

// Reminder returns the short per-turn reminder of what the final answer
// must contain, given what the session already has: "" when it is final.
func (s *Session) Reminder() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.doneLocked() {
		return ""
	}
	var b strings.Builder
	t := s.tags
	missing := s.missingLocked()
	if s.final != nil {
		b.WriteString("Reminder: your final report was received and is kept; do not send it again. Still required, one block each:\n")
	} else {
		fmt.Fprintf(&b, "Reminder: end with your final report inside %s and %s", t.OpenFinal(), t.CloseFinal())
		if len(missing) == 0 {
			b.WriteString(".\n")
			return b.String()
		}
		b.WriteString(", and add one metadata block per plugin, each with one JSON object:\n")
	}
	for _, p := range missing {
		fmt.Fprintf(&b, "%s...%s %s\n", t.OpenMeta(p.name), t.CloseMeta(), strings.TrimSpace(p.req.ShortInstruction))
	}
	return b.String()
}

func (s *Session) missingLocked() []*bound {
	var out []*bound
	for _, p := range s.plugins {
		if p.value == nil {
			out = append(out, p)
		}
	}
	return out
}

func (s *Session) nameList() string {
	names := make([]string, len(s.plugins))
	for i, p := range s.plugins {
		names[i] = fmt.Sprintf("%q", p.name)
	}
	return strings.Join(names, ", ")
}

// metaBlock renders a plugin's META block with the example value or a
// placeholder, after a line with its short instruction when describe is set.
func (s *Session) metaBlock(p *bound, describe bool) string {
	var b strings.Builder
	if describe {
		fmt.Fprintf(&b, "Metadata for plugin %q: %s\n", p.name, strings.TrimSpace(p.req.ShortInstruction))
	}
	b.WriteString(s.tags.OpenMeta(p.name))
	b.WriteString("\n")
	if len(p.example) > 0 {
		b.Write(p.example)
	} else {
		fmt.Fprintf(&b, "{the JSON object for %s}", p.name)
	}
	b.WriteString("\n")
	b.WriteString(s.tags.CloseMeta())
	b.WriteString("\n")
	return b.String()
}

// feedback renders the retry message for a turn that did not finish the
// session. It names every problem with its plugin and shows exactly the
// blocks still to send.
func (s *Session) feedback(t *Turn) string {
	var b strings.Builder
	tg := s.tags
	b.WriteString("## Final answer not accepted yet\n\n")
	if len(s.plugins) > 0 {
		fmt.Fprintf(&b, "A final answer is accepted only with a final report and valid metadata for every required plugin (%s). ", s.nameList())
	} else {
		b.WriteString("A final answer is accepted only with a final report. ")
	}
	b.WriteString("This is what is wrong:\n\n")
	switch t.Final {
	case FinalMissing:
		fmt.Fprintf(&b, "- The final report is missing: there is no %s block.\n", tg.FinalName())
	case FinalEmpty:
		b.WriteString("- The final report is empty: it shows nothing.\n")
	case FinalTruncated:
		fmt.Fprintf(&b, "- The final report appears truncated: its closing tag %s is missing.\n", tg.CloseFinal())
	case FinalDuplicate:
		fmt.Fprintf(&b, "- The response has %d %s blocks; send the final report exactly once, so that it is clear which is the answer.\n",
			t.Response.IgnoredFinals+1, tg.FinalName())
	case FinalQuoted:
		fmt.Fprintf(&b, "- The %s block on line %d is %s, so it reads as an example, not as your report. Write the block as plain text, not as code or a comment.\n",
			tg.FinalName(), t.Response.Final.Line, t.Response.Final.Quoted)
	case FinalPlaceholder:
		b.WriteString("- The final report is the placeholder from the instructions, not a report. Write your own report of the work in its place.\n")
	}
	var invalid []*bound
	for _, c := range t.Metas {
		p := s.byName[c.Plugin]
		switch c.Status {
		case MetaMissing:
			fmt.Fprintf(&b, "- Metadata for plugin %q is missing.\n", c.Plugin)
		case MetaNotJSON:
			fmt.Fprintf(&b, "- Metadata for plugin %q is not valid JSON: %s.\n", c.Plugin, strings.Join(c.Details, "; "))
		case MetaSchemaInvalid:
			fmt.Fprintf(&b, "- Metadata for plugin %q failed schema validation:\n", c.Plugin)
			for _, d := range c.Details {
				fmt.Fprintf(&b, "  - %s\n", d)
			}
			invalid = append(invalid, p)
		case MetaTruncated:
			fmt.Fprintf(&b, "- Metadata for plugin %q appears truncated: its closing tag %s is missing.\n", c.Plugin, tg.CloseMeta())
		case MetaDuplicate:
			fmt.Fprintf(&b, "- Metadata for plugin %q was sent more than once in one response; send one block for it, exactly once.\n", c.Plugin)
		case MetaQuoted:
			fmt.Fprintf(&b, "- The metadata block for plugin %q on line %d is %s, so it reads as an example. Write the block as plain text, not as code or a comment.\n",
				c.Plugin, c.Block.Line, c.Block.Quoted)
		}
	}
	for _, u := range t.Unknown {
		if !u.HasPlugin {
			fmt.Fprintf(&b, "- A metadata block on line %d has no plugin attribute, so it was ignored.\n", u.Line)
		} else {
			fmt.Fprintf(&b, "- A metadata block on line %d names plugin %q, which is not required here, so it was ignored.\n", u.Line, u.Plugin)
		}
	}
	b.WriteString("\n")
	if s.final != nil {
		b.WriteString("Your final report was received and is kept. Do not send it again.\n")
	}
	var kept []string
	for _, p := range s.plugins {
		if p.value != nil {
			kept = append(kept, fmt.Sprintf("%q", p.name))
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(&b, "Metadata for plugin %s was accepted. Do not send it again.\n", strings.Join(kept, ", "))
	}
	for _, p := range invalid {
		fmt.Fprintf(&b, "The schema for plugin %q is:\n%s\n", p.name, compactJSON(p.req.Schema))
	}
	b.WriteString("\nSend exactly this now, with your own content in place of the placeholders and example values:\n\n")
	if s.final == nil {
		fmt.Fprintf(&b, "%s\nyour complete final report\n%s\n", tg.OpenFinal(), tg.CloseFinal())
	}
	for _, p := range s.missingLocked() {
		b.WriteString(s.metaBlock(p, true))
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
