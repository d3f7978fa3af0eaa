package shell

import (
	"strconv"
	"strings"
	"unicode"
)

// PatchFile is a file a patch writes or deletes.
type PatchFile struct {
	Path string
	Kind string // "write" or "delete"
}

// PatchFiles returns the files a patch body names, read as the hosts read
// them. An apply_patch envelope (*** Begin Patch) has only its own headers
// (*** Add/Update/Delete File:, *** Move to:), which Codex finds after
// trimming leading and trailing white space; its content lines are never
// headers. A unified diff has ---/+++ header pairs, git's rename and copy
// lines, and hunks whose line counts say where their body ends, so a
// content line that begins with "--- " (an SQL or Lua comment) is content.
func PatchFiles(body string) []PatchFile {
	lines := strings.Split(body, "\n")
	for _, l := range lines {
		if trimPatch(l) == "*** Begin Patch" {
			// Codex reads the envelope; a tool that reads unified diffs
			// reads the same body by its diff headers: both are checked.
			return append(envelopeFiles(lines), diffFiles(lines)...)
		}
	}
	return diffFiles(lines)
}

func trimPatch(l string) string { return strings.TrimFunc(l, unicode.IsSpace) }

func envelopeFiles(lines []string) []PatchFile {
	var out []PatchFile
	for _, l := range lines {
		l = trimPatch(l)
		for _, h := range [...]struct{ pre, kind string }{{"*** Add File:", "write"}, {"*** Update File:", "write"},
			{"*** Delete File:", "delete"}, {"*** Move to:", "write"}} {
			if s, ok := strings.CutPrefix(l, h.pre); ok {
				if s = trimPatch(s); s != "" {
					out = append(out, PatchFile{s, h.kind})
				}
			}
		}
	}
	return out
}

func diffFiles(lines []string) []PatchFile {
	var out []PatchFile
	oldLeft, newLeft := 0, 0
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r")
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(l, "\\"):
			case strings.HasPrefix(l, "-"):
				oldLeft--
			case strings.HasPrefix(l, "+"):
				newLeft--
			default:
				oldLeft--
				newLeft--
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "@@"):
			oldLeft, newLeft = hunkCounts(l)
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			oldPath := diffPath(l[4:])
			newPath := diffPath(strings.TrimRight(lines[i+1], "\r")[4:])
			i++
			switch {
			case newPath == "" && oldPath != "":
				out = append(out, PatchFile{oldPath, "delete"})
			case newPath != "":
				out = append(out, PatchFile{newPath, "write"})
				if oldPath != "" && oldPath != newPath {
					out = append(out, PatchFile{oldPath, "delete"})
				}
			}
		case strings.HasPrefix(l, "diff --git "):
			// git apply takes the names from this line when no ---/+++
			// pair follows: a new empty file, a deletion, a mode change,
			// a binary patch (GIT binary patch, literal content).
			for _, f := range gitHeaderNames(l[len("diff --git "):]) {
				out = append(out, PatchFile{f, "write"})
			}
		case strings.HasPrefix(l, "rename from "):
			out = append(out, PatchFile{strings.TrimSpace(l[12:]), "delete"})
		case strings.HasPrefix(l, "rename to "), strings.HasPrefix(l, "copy to "):
			_, p, _ := strings.Cut(l, " to ")
			out = append(out, PatchFile{strings.TrimSpace(p), "write"})
		}
	}
	return out
}

// hunkCounts reads "@@ -a,b +c,d @@": the old and new line counts (1 when
// a count is left out).
func hunkCounts(l string) (int, int) {
	f := strings.Fields(l)
	if len(f) < 3 {
		return 0, 0
	}
	count := func(s string) int {
		_, n, ok := strings.Cut(s, ",")
		if !ok {
			return 1
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return 0
		}
		return v
	}
	return count(f[1]), count(f[2])
}

// diffPath reads the path of a ---/+++ header: without the a/ or b/
// prefix and the timestamp after a tab; "" for /dev/null.
func diffPath(s string) string {
	if strings.HasPrefix(s, `"`) {
		// A name git quoted as C quotes a string ("b/\056env"): git
		// and patch unquote it.
		if q, _, ok := cutQuoted(s); ok {
			s = q
			if s == "/dev/null" {
				return ""
			}
			if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
				s = s[2:]
			}
			return s
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" || s == "" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		s = s[2:]
	}
	return s
}

// cutQuoted reads a C-quoted name at the start of s, as git writes names
// with unusual characters ("a/x\ty"): the name unquoted, the rest of s.
func cutQuoted(s string) (name, rest string, ok bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			q, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return s[1:i], s[i+1:], true
			}
			return q, s[i+1:], true
		}
	}
	return "", s, false
}

// gitHeaderNames returns the names a "diff --git a/X b/Y" line may give
// (each without its a/ or b/ prefix). Unquoted names with spaces are
// ambiguous: every split at " b/" is returned.
func gitHeaderNames(s string) []string {
	s = strings.TrimRight(s, "\r")
	var out []string
	strip := func(n string) string {
		if strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/") {
			return n[2:]
		}
		return n
	}
	if strings.HasPrefix(s, `"`) {
		a, rest, ok := cutQuoted(s)
		if !ok {
			return nil
		}
		out = append(out, strip(a))
		rest = strings.TrimLeft(rest, " ")
		if b, _, ok := cutQuoted(rest); ok && strings.HasPrefix(rest, `"`) {
			return append(out, strip(b))
		}
		return append(out, strip(rest))
	}
	// Every split at a space, or only those at " b/" when there are any
	// (the usual prefixes).
	prefixed := strings.Contains(s, " b/") || strings.Contains(s, ` "b/`)
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			continue
		}
		b := s[i+1:]
		if b == "" || prefixed && !strings.HasPrefix(b, "b/") && !strings.HasPrefix(b, `"b/`) {
			continue
		}
		if strings.HasPrefix(b, `"`) {
			if q, _, ok := cutQuoted(b); ok {
				b = q
			}
		}
		out = append(out, strip(s[:i]), strip(b))
	}
	if len(out) == 0 && s != "" {
		out = append(out, strip(s))
	}
	return out
}
