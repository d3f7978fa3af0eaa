package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Source is one plain-language rule and where it is written.
type Source struct {
	Text string
	File string
	Line int
}

func (s Source) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

var (
	bullet   = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)
	fence    = regexp.MustCompile("^\\s*(```|~~~)")
	htmlNote = regexp.MustCompile(`^\s*<!--.*-->\s*$`)
)

// ReadSources reads a plain-language rules file: one rule per bullet (-, *,
// + or 1.), or, in a file without bullets, one rule per line. Headings (#),
// blank lines, HTML comments, fenced code blocks and (in a file with
// bullets) other text are not rules; a bullet's indented continuation
// lines belong to it. Duplicate rules are an error, naming both lines.
func ReadSources(file string) ([]Source, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return ParseSources(file, string(data))
}

// ParseSources is ReadSources on text already read.
func ParseSources(file, text string) ([]Source, error) {
	var out, plain []Source
	inFence, inBullet := false, false
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		n := i + 1
		if fence.MatchString(line) {
			inFence, inBullet = !inFence, false
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case inFence:
			continue
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || htmlNote.MatchString(line):
			inBullet = false
			continue
		case bullet.MatchString(line):
			text := strings.TrimSpace(bullet.ReplaceAllString(line, ""))
			inBullet = text != ""
			if inBullet {
				out = append(out, Source{Text: text, File: file, Line: n})
			}
		case inBullet && (line[0] == ' ' || line[0] == '\t'):
			out[len(out)-1].Text += " " + trimmed
		default:
			plain = append(plain, Source{Text: trimmed, File: file, Line: n})
			inBullet = false
		}
	}
	if len(out) == 0 {
		out = plain
	}
	seen := map[string]int{}
	for _, s := range out {
		if prev, dup := seen[s.Text]; dup {
			return nil, fmt.Errorf("%s:%d: the same rule is written twice (first at line %d)", file, s.Line, prev)
		}
		seen[s.Text] = s.Line
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rules found (write one rule per line or per bullet)", file)
	}
	return out, nil
}

// SourcesHash is the hash the compiled: section records for a set of
// rules: sha256 over the rule texts in order, one per line.
func SourcesHash(srcs []Source) string {
	h := sha256.New()
	for _, s := range srcs {
		h.Write([]byte(s.Text))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
