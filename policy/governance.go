package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"go.yaml.in/yaml/v3"
)

// Governance is the `governance` section (an extension): what each
// delegation depth reads at session start (docs/policy.md, "What each
// depth reads").
type Governance struct {
	// Levels are the levels by depth, lowest first. Empty: every depth
	// reads the built-in text, as without the section.
	Levels []*Level
	Pos    Pos
}

// Level is what the sessions at one delegation depth (and the deeper ones,
// up to the next level listed) read at session start.
type Level struct {
	// Depth is the level's key: 0 the main agent, 1 its subagents, 2
	// theirs.
	Depth int
	// Sections are the parts of the built-in text the level gets (see
	// LevelSections); nil: all of them.
	Sections []string
	// State lists the project and session state the level reads (see
	// LevelState); nil: DefaultLevelState.
	State []string
	// Files are files whose text the level gets at session start.
	Files []LevelFile
	Pos   Pos
}

// LevelFile is one file a level reads.
type LevelFile struct {
	// Name is the path as the policy writes it (relative to the policy's
	// folder); Path is absolute.
	Name string
	Path string
	Pos  Pos
}

// LevelSections are the parts of the built-in governance text a level can
// choose: the rules (tool list, rules, files, defaults), the hierarchy of
// roles, and the required first action.
var LevelSections = []string{"rules", "hierarchy", "first"}

// LevelState are the state keys a level can read: the project's phase,
// its critical and high anchors, the user's latest request and active
// intent, the project history's latest entries, and the session's own
// counters (calls, violations).
var LevelState = []string{"phase", "anchors", "intent", "history", "session"}

// DefaultLevelState is what a level without `state` reads.
var DefaultLevelState = []string{"phase", "anchors", "intent", "session"}

// LevelFileMax is how much of a level's file the session-start text
// carries; the rest is left out, and the text says so.
const LevelFileMax = 32 << 10

// LevelFor returns the level the sessions at depth read: the level listed
// for depth, else the deepest level listed above it (a depth past the
// last level gets the last one). nil: the policy lists no level at or
// above depth, and the session reads the built-in text.
func (p *Policy) LevelFor(depth int) *Level {
	if p == nil {
		return nil
	}
	var got *Level
	for _, l := range p.Governance.Levels {
		if l.Depth <= depth {
			got = l
		}
	}
	return got
}

// Has reports whether the level gets a section of the built-in text. A
// nil level gets every section.
func (l *Level) Has(section string) bool {
	return l == nil || l.Sections == nil || contains(l.Sections, section)
}

// Reads reports whether the level reads a state key. A nil level reads
// what the built-in text shows.
func (l *Level) Reads(key string) bool {
	if l == nil {
		return key != "history"
	}
	if l.State == nil {
		return contains(DefaultLevelState, key)
	}
	return contains(l.State, key)
}

// governance decodes the `governance` section.
func (d *decoder) governance(p *Policy, n *yaml.Node) {
	p.Governance.Pos = d.pos(n)
	m := d.mapping(n, "governance", "levels")
	f, ok := m["levels"]
	if !ok {
		return
	}
	lm := resolve(f.val)
	if lm.Kind != yaml.MappingNode {
		d.err(f.val, "governance.levels", "must be a mapping from a delegation depth (0 the main agent, 1 its subagents, 2 theirs) to what it reads, not %s", kindName(lm))
		return
	}
	seen := map[int]int{}
	for i := 0; i+1 < len(lm.Content); i += 2 {
		k, v := lm.Content[i], lm.Content[i+1]
		path := "governance.levels." + k.Value
		depth, err := strconv.Atoi(k.Value)
		if k.Kind != yaml.ScalarNode || err != nil {
			d.err(k, path, "unknown level %q: a level's key is a delegation depth, 0 (the main agent), 1 (its subagents), 2 (theirs), ...", k.Value)
			continue
		}
		if depth < 0 {
			d.err(k, path, "depth %d is negative: depths start at 0 (the main agent)", depth)
			continue
		}
		if line, dup := seen[depth]; dup {
			d.err(k, path, "depth %d is listed twice (first at line %d): remove one", depth, line)
			continue
		}
		seen[depth] = k.Line
		l := &Level{Depth: depth, Pos: d.pos(k)}
		if vn := resolve(v); vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
			// `2:` alone: the level reads the defaults.
			p.Governance.Levels = append(p.Governance.Levels, l)
			continue
		}
		lf := d.mapping(v, path, "sections", "state", "files")
		if s, ok := lf["sections"]; ok {
			l.Sections = d.names(s.val, path+".sections", LevelSections)
		}
		if s, ok := lf["state"]; ok {
			l.State = d.names(s.val, path+".state", LevelState)
		}
		if s, ok := lf["files"]; ok {
			d.levelFiles(p, l, s.val, path+".files")
		}
		p.Governance.Levels = append(p.Governance.Levels, l)
	}
	sort.SliceStable(p.Governance.Levels, func(i, j int) bool { return p.Governance.Levels[i].Depth < p.Governance.Levels[j].Depth })
}

// names decodes a list of names from allowed; an empty list is a list
// (the level reads none of them), not nil.
func (d *decoder) names(n *yaml.Node, path string, allowed []string) []string {
	r := resolve(n)
	if r.Kind == yaml.ScalarNode && r.Tag != "!!null" {
		r = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{r}}
	}
	if r.Kind != yaml.SequenceNode {
		d.err(n, path, "must be a list (of %s), not %s", strings.Join(allowed, ", "), kindName(r))
		return []string{}
	}
	out := []string{}
	for i, c := range r.Content {
		s, ok := d.str(c, fmt.Sprintf("%s[%d]", path, i))
		if !ok {
			continue
		}
		if !contains(allowed, s) {
			d.err(c, fmt.Sprintf("%s[%d]", path, i), "unknown %q (one of %s)", s, strings.Join(allowed, ", "))
			continue
		}
		if contains(out, s) {
			d.warn(c, fmt.Sprintf("%s[%d]", path, i), "%q is listed twice", s)
			continue
		}
		out = append(out, s)
	}
	return out
}

// levelFiles decodes a level's files: each must be a file inside the
// workspace that no private glob covers, there now.
func (d *decoder) levelFiles(p *Policy, l *Level, n *yaml.Node, path string) {
	names := d.strs(n, path)
	for i, name := range names {
		node := itemNode(n, i)
		ip := fmt.Sprintf("%s[%d]", path, i)
		abs := expandHome(name)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(p.Dir, abs)
		}
		abs = filepath.Clean(abs)
		f := LevelFile{Name: name, Path: abs, Pos: d.pos(node)}
		if err := p.CheckLevelFile(f); err != nil {
			d.err(node, ip, "%v", err)
			continue
		}
		if st, err := os.Stat(abs); err == nil && st.Size() > LevelFileMax {
			d.warn(node, ip, "%s is %d bytes: the session-start text carries its first %d", name, st.Size(), LevelFileMax)
		}
		l.Files = append(l.Files, f)
	}
}

// CheckLevelFile says why a level may not give a file to the model: it
// does not exist or is a folder, it lies outside the workspace (a link
// counts where it leads), or a private glob covers it. The session layer
// checks again when it reads the file.
func (p *Policy) CheckLevelFile(f LevelFile) error {
	st, err := os.Stat(f.Path)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s does not exist (%s): create it or remove it from the level", f.Name, f.Path)
		}
		return fmt.Errorf("%s cannot be read: %v", f.Name, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a folder; a level reads files", f.Name)
	}
	real, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %v", f.Name, err)
	}
	root := p.Workspace.Root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside the workspace (%s); a level reads files inside it", f.Name, p.Workspace.Root)
	}
	if p.privateFile(f.Path) || p.privateFile(real) {
		return fmt.Errorf("%s is private (a private glob covers it): no agent may read it", f.Name)
	}
	return nil
}

// privateFile reports whether a private glob covers the absolute path
// abs: a glob starting with "/" or "~/" matches the absolute path, any
// other the path relative to the workspace root.
func (p *Policy) privateFile(abs string) bool {
	rel, err := filepath.Rel(p.Workspace.Root, abs)
	inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	if r, err := filepath.EvalSymlinks(p.Workspace.Root); err == nil && !inside {
		if rel2, err := filepath.Rel(r, abs); err == nil && rel2 != ".." && !strings.HasPrefix(rel2, ".."+string(filepath.Separator)) {
			rel, inside = rel2, true
		}
	}
	// As the engine does, a glob also matches the path in lower case
	// (a file system that ignores case opens .ENV for .env).
	for _, s := range p.Private {
		s = expandHome(s)
		for _, fold := range []bool{false, true} {
			pat, a, r := filepath.ToSlash(s), filepath.ToSlash(abs), filepath.ToSlash(rel)
			if fold {
				pat, a, r = strings.ToLower(pat), strings.ToLower(a), strings.ToLower(r)
			}
			g, err := glob.CompilePath(pat)
			if err != nil {
				continue
			}
			if filepath.IsAbs(s) && g.Match(strings.TrimPrefix(a, "/")) || !filepath.IsAbs(s) && inside && g.Match(r) {
				return true
			}
		}
	}
	return false
}
