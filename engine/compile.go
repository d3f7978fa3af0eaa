package engine

import (
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
)

// rule is a compiled policy rule.
type rule struct {
	idx        int
	id         string
	effect     warden.Effect // allow, ask or deny; warn is allow with warn set
	warn       bool
	tools      []toolMatcher // empty: any tool
	commands   []shell.Pattern
	paths      []pathGlob
	excl       []pathGlob
	hasPath    bool
	args       []argMatcher
	intent     *regexp.Regexp
	roles      []string
	message    string
	suggestion string
	one        []string // []string{id}, shared by decisions it alone matched
	seq        *seqRule // after:, repeat:, rate: (nil for most rules)
}

type toolMatcher struct {
	name string // exact name
	kind string // a tool kind
	glob string // a text glob on the name
	re   *regexp.Regexp
}

// argMatcher is a rule's condition on a top-level string argument: its
// glob matches the value, or with neg (a pattern "!GLOB") does not. A
// missing argument, or one that is not a string, meets neither form.
type argMatcher struct {
	name, glob string
	neg        bool
}

func (a argMatcher) matches(args map[string]any) bool {
	v, ok := args[a.name].(string)
	return ok && globText(a.glob, v) != a.neg
}

// pathGlob is a path pattern: relative to the workspace root, or absolute
// (it began with "/" or "~/").
type pathGlob struct {
	g   glob.Path
	abs bool
	// fold, for the protected and private globs, matches the path with
	// its letters lowered: on a file system that ignores case (macOS,
	// Windows) .ENV and .Git/config are .env and .git/config.
	fold *glob.Path
}

type roleInfo struct {
	*policy.Role
	tools     []toolMatcher
	first     []toolMatcher
	toolsText string // the role's tools, comma-separated, for messages
	// bit is the role's bit in toolFacts.roles (0 past the 64th role,
	// whose tool list is read at each decision).
	bit uint64
}

// Compile compiles a loaded policy. It reads the intents file, if the
// policy has one, and resolves the workspace root, through ws, which its
// decisions read as well (the engine never reads the disk). The policy
// must have passed policy.Load; Compile reports what it cannot compile.
func Compile(p *policy.Policy, ws Workspace) (*Engine, error) {
	if ws == nil {
		return nil, fmt.Errorf("compile %s: no workspace view", p.File)
	}
	e := &Engine{pol: p, ws: ws, roles: map[string]*roleInfo{}, cmdIndex: map[string]*progIndex{}, tools: map[string]toolFacts{}}
	for _, names := range []iter.Seq[string]{maps.Keys(p.Tools), maps.Keys(policy.BuiltinKinds), maps.Keys(searchTools)} {
		for t := range names {
			e.tools[t] = toolFactsFor(p, t)
		}
	}
	root := p.Workspace.Root
	if root == "" {
		root = p.Dir
	}
	e.rootRaw = filepath.Clean(root)
	if r, err := evalSymlinks(ws, e.rootRaw); err == nil {
		e.root = r
	} else {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	e.rootGitPaths, e.ownGit = *gitPaths(e.root), filepath.Join(e.root, ".git")
	_, gerr := ws.Lstat(e.ownGit)
	e.rootGit = gerr == nil
	e.home, _ = ws.UserHomeDir()
	e.audit = p.Mode == "audit"

	// Protected: the policy's globs, and always the policy file itself, the
	// store folder next to it and the intents file.
	for _, s := range slices.Concat(repoControl, p.Protected) {
		g, err := e.compilePath(s)
		if err != nil {
			return nil, fmt.Errorf("protected %q: %w", s, err)
		}
		e.protected = append(e.protected, e.folded(g, s))
	}
	for _, s := range p.Private {
		g, err := e.compilePath(s)
		if err != nil {
			return nil, fmt.Errorf("private %q: %w", s, err)
		}
		e.private = append(e.private, e.folded(g, s))
	}
	e.protectedAbs = []string{p.File, filepath.Join(p.Dir, ".warden")}
	if p.Intents != nil {
		e.protectedAbs = append(e.protectedAbs, p.Intents.File)
	}
	e.protectedAbs = append(e.protectedAbs, hostControlPaths([]string{p.Dir, e.rootRaw}, e.home, ws.Getenv("PATH"))...)
	if e.rootGit {
		e.protectedAbs = append(e.protectedAbs, repoHookPaths(ws, e.rootRaw, e.home)...)
	}
	e.protectedASCII = true
	res := prefixResolver{ws: ws, m: map[string]string{}}
	for i, s := range e.protectedAbs {
		e.protectedAbs[i] = res.eval(s)
		e.protectedASCII = e.protectedASCII && isASCII(e.protectedAbs[i])
	}

	for _, r := range p.Roles {
		ri := &roleInfo{Role: r, toolsText: strings.Join(r.Tools, ", ")}
		if n := len(e.roles); n < 64 {
			ri.bit = 1 << n
		}
		for _, t := range r.Tools {
			ri.tools = append(ri.tools, compileTool(t))
		}
		for _, t := range r.First {
			ri.first = append(ri.first, compileTool(t))
		}
		e.roles[r.Name] = ri
	}
	// What each tool name the engine knows may be used by, as a bit per
	// role: the role check reads a bit, not the role's tool list.
	for t, tf := range e.tools {
		for _, ri := range e.roles {
			if ri.bit != 0 && ri.Tools != nil && anyTool(ri.tools, t, tf.kind) {
				tf.roles |= ri.bit
			}
		}
		tf.rolesKnown = true
		e.tools[t] = tf
	}
	if len(e.roles) > 0 && len(e.roles) <= 8 {
		for _, ri := range e.roles {
			e.roleList = append(e.roleList, ri)
		}
	}

	for i, pr := range p.Rules {
		r := &rule{idx: i, id: pr.ID, message: plainText(pr.Message), suggestion: plainText(pr.Suggestion), roles: pr.Roles, one: []string{pr.ID}}
		switch pr.Effect {
		case "warn":
			r.effect, r.warn = warden.Allow, true
		default:
			r.effect = warden.Effect(pr.Effect)
		}
		for _, t := range pr.Tool {
			r.tools = append(r.tools, compileTool(t))
		}
		for _, c := range pr.Command {
			pat, err := shell.CompilePattern(c)
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", pr.ID, err)
			}
			r.commands = append(r.commands, pat)
		}
		for _, s := range pr.Path {
			excl := strings.HasPrefix(s, "!")
			g, err := e.compilePath(strings.TrimPrefix(s, "!"))
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", pr.ID, err)
			}
			if excl {
				r.excl = append(r.excl, g)
			} else {
				r.paths = append(r.paths, g)
			}
			r.hasPath = true
		}
		for k, v := range pr.Args {
			neg := strings.HasPrefix(v, "!")
			r.args = append(r.args, argMatcher{name: k, glob: strings.TrimPrefix(v, "!"), neg: neg})
		}
		if pr.Intent != "" {
			re, err := regexp.Compile(pr.Intent)
			if err != nil {
				return nil, fmt.Errorf("rule %s: intent: %w", pr.ID, err)
			}
			r.intent = re
		}
		if err := e.compileSeq(r, pr); err != nil {
			return nil, fmt.Errorf("rule %s: %w", pr.ID, err)
		}
		e.rules = append(e.rules, r)
		for k := range r.commands {
			e.index(r, &r.commands[k])
		}
		if len(r.commands) == 0 {
			e.nonCommand = append(e.nonCommand, r)
			if !r.hasPath {
				e.callRules = append(e.callRules, r)
			}
		}
	}

	if p.Intents != nil {
		in, err := loadIntents(p.Intents.File, e)
		if err != nil {
			return nil, err
		}
		e.intents = in
	}
	return e, nil
}

// plainText is a rule's message or suggestion as hosts get it: without
// emoji or box drawing (warden.TerminalSafe), trimmed.
func plainText(s string) string { return strings.TrimSpace(warden.TerminalSafe(s)) }

// patRef is one command pattern of a rule.
type patRef struct {
	r *rule
	p *shell.Pattern
}

// progIndex holds the command patterns of one program, by their first
// literal operand, so that a command meets only the patterns that can match
// it however large the policy grows.
type progIndex struct {
	byOp map[string][]patRef // first operand token is a literal
	any  []patRef            // first operand is a glob, "*" or absent
	all  []patRef            // every pattern, for commands whose first operand is computed
}

// index files a pattern under every stage's program and first operand.
func (e *Engine) index(r *rule, p *shell.Pattern) {
	ref := patRef{r: r, p: p}
	seen := map[[2]string]bool{}
	for k := 0; k < p.StageCount(); k++ {
		prog, op := p.StageKey(k)
		if seen[[2]string{prog, op}] {
			continue
		}
		seen[[2]string{prog, op}] = true
		if glob.HasMeta(prog) {
			e.cmdAny = append(e.cmdAny, ref)
			continue
		}
		pi := e.cmdIndex[prog]
		if pi == nil {
			pi = &progIndex{byOp: map[string][]patRef{}}
			e.cmdIndex[prog] = pi
		}
		if op != "" {
			pi.byOp[op] = append(pi.byOp[op], ref)
		} else {
			pi.any = append(pi.any, ref)
		}
		pi.all = append(pi.all, ref)
	}
}

func compileTool(t string) toolMatcher {
	switch {
	case len(t) > 2 && t[0] == '/' && t[len(t)-1] == '/':
		if re, err := regexp.Compile(t[1 : len(t)-1]); err == nil {
			return toolMatcher{re: re}
		}
		return toolMatcher{name: t}
	case policy.IsKind(t):
		return toolMatcher{kind: t}
	case glob.HasMeta(t):
		return toolMatcher{glob: t}
	}
	return toolMatcher{name: t}
}

func (m *toolMatcher) match(tool, kind string) bool {
	switch {
	case m.kind != "":
		return m.kind == kind
	case m.re != nil:
		return m.re.MatchString(tool)
	case m.glob != "":
		return glob.Text(m.glob, tool)
	}
	return m.name == tool
}

// compilePath compiles a path pattern; "/x" and "~/x" are absolute.
func (e *Engine) compilePath(s string) (pathGlob, error) {
	abs := false
	if strings.HasPrefix(s, "~/") && e.home != "" {
		s = filepath.ToSlash(e.home) + s[1:]
	}
	if strings.HasPrefix(s, "/") {
		abs = true
	}
	g, err := glob.CompilePath(s)
	return pathGlob{g: g, abs: abs}, err
}

// folded adds to a protected or private glob the lowered pattern its
// match also tries (pathGlob.fold).
func (e *Engine) folded(g pathGlob, s string) pathGlob {
	if l, err := e.compilePath(foldLower(s)); err == nil {
		g.fold = &l.g
	}
	return g
}

// foldLower lowers s as a file system that ignores case compares names:
// each letter becomes the lower case of its class under Unicode simple
// case folding, and of its upper case (macOS's APFS folds the long s
// "ſ" and the Kelvin sign to "s" and "k", so .github/workflowſ is
// .github/workflows there; Windows upper-cases names, and "ı" is "I").
// strings.ToLower leaves "ſ" and "ı" as they are.
func foldLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return unicode.ToLower(unicode.ToUpper(m))
	}, s)
}

// prefixResolver resolves the symlinks of the longest existing prefix of
// absolute paths and appends the rest, one Lstat per folder for all the
// paths it is given (the own paths share their folders: .claude, home).
type prefixResolver struct {
	ws Workspace
	m  map[string]string
}

// eval resolves p.
func (m prefixResolver) eval(p string) string {
	if r, ok := m.m[p]; ok {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	r := filepath.Join(m.eval(parent), filepath.Base(p))
	if fi, err := m.ws.Lstat(r); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := evalSymlinks(m.ws, r); err == nil {
			r = t
		}
	}
	m.m[p] = r
	return r
}
