package policy

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell"
	"go.yaml.in/yaml/v3"
)

// Severity of a finding.
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Finding is one problem found in a policy file, with its position.
type Finding struct {
	Pos      Pos
	Severity string
	// Field is the dotted path of the field, e.g. "rules[2].effect".
	Field   string
	Message string
}

func (f Finding) String() string {
	s := f.Pos.String() + ": " + f.Severity + ": "
	if f.Field != "" {
		s += f.Field + ": "
	}
	return s + f.Message
}

// Error is returned when a policy has errors. It lists every error found,
// not only the first.
type Error struct {
	File     string
	Findings []Finding
}

func (e *Error) Error() string {
	var b strings.Builder
	n := 0
	for _, f := range e.Findings {
		if f.Severity != SevError {
			continue
		}
		if n > 0 {
			b.WriteString("\n")
		}
		b.WriteString(f.String())
		n++
	}
	if n == 0 {
		return e.File + ": invalid policy"
	}
	return b.String()
}

// FileName is the policy file name warden looks for.
const FileName = "warden.yaml"

// FileNames are the names Find looks for in each folder, in order.
var FileNames = [...]string{FileName, "warden.yml", "warden.json"}

// StoreDir is the folder next to a policy that holds its store.
const StoreDir = ".warden"

// Find returns the policy file for dir: warden.yaml in dir or the nearest
// parent folder that has one (warden.yml and warden.json are accepted too).
// Not finding one is an error, never an allow.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find policy: %w", err)
	}
	for d := abs; ; {
		for _, name := range FileNames {
			p := filepath.Join(d, name)
			st, err := os.Stat(p)
			if err == nil && st.IsDir() {
				// A folder where the policy should be is a mistake to
				// report, not a reason to look further up.
				return "", fmt.Errorf("%s is a folder, not a policy file (remove it, or pass --policy FILE)", p)
			}
			if err == nil {
				return p, nil
			}
			if lst, lerr := os.Lstat(p); lerr == nil {
				// A link to nothing, or a file warden may not read: the
				// policy of this folder is broken, and a policy further up
				// must not take its place.
				if lst.Mode()&os.ModeSymlink != 0 && os.IsNotExist(err) {
					to, _ := os.Readlink(p)
					return "", fmt.Errorf("%s is a broken link (to %s, which is not there): restore the policy or remove the link, or pass --policy FILE", p, to)
				}
				return "", fmt.Errorf("%s is there but cannot be read (%v): fix or remove it, or pass --policy FILE", p, err)
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", fmt.Errorf("no %s found in %s or any parent folder (create one, or pass --policy FILE)", FileName, abs)
}

// Load reads and validates a policy file. It fails on any error finding;
// warnings are available from Lint.
func Load(path string) (*Policy, error) {
	p, _, err := LoadWarnings(path)
	return p, err
}

// LoadWarnings is Load that also returns the warnings of a policy that
// loads (warden doctor shows them): the file is read and parsed once.
func LoadWarnings(path string) (*Policy, []Finding, error) {
	p, findings, err := Lint(path)
	if err != nil {
		return nil, nil, err
	}
	if p, err = checked(p, findings); err != nil {
		return nil, nil, err
	}
	var warns []Finding
	for _, f := range findings {
		if f.Severity == SevWarning {
			warns = append(warns, f)
		}
	}
	return p, warns, nil
}

// LoadStable is Load for a front end that decides with the policy (check,
// explain, test, the hooks, the Go client): the policy may be being
// rewritten at any moment, and it decides only with a whole file, one
// that has not changed for Settle (see ReadStable). A file cut short and
// left so is quiet: a sealed policy's seal (see seal) and the refusal of an
// allow cut after its tool line (see lintToolOnly) catch it.
func LoadStable(path string) (*Policy, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	data, err := ReadStable(abs)
	if err != nil {
		return nil, err
	}
	return checked(parseFile(abs, data))
}

// LoadBytes validates a policy already read from file (an absolute path),
// like Load. A caller that keeps compiled policies uses it to decide and
// cache from the very bytes it compared.
func LoadBytes(file string, data []byte) (*Policy, error) {
	return checked(Parse(file, data))
}

func checked(p *Policy, findings []Finding) (*Policy, error) {
	for _, f := range findings {
		if f.Severity == SevError {
			return nil, &Error{File: p.File, Findings: findings}
		}
	}
	return p, nil
}

// Lint reads a policy file and returns it with every finding (errors and
// warnings). err is set only when the file cannot be read at all; a policy
// with error findings is returned as far as it could be decoded.
func Lint(path string) (*Policy, []Finding, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("policy %s: %w", path, err)
	}
	data, _, err := readOnce(abs)
	if err != nil {
		return nil, nil, err
	}
	p, findings := parseFile(abs, data)
	return p, findings, nil
}

// parseFile is Parse of a policy read from its file, with the findings
// about its intents file.
func parseFile(abs string, data []byte) (*Policy, []Finding) {
	p, findings := Parse(abs, data)
	if p.Intents != nil {
		// The intents file: an intent that owns nothing, or a file warden
		// cannot read (every write that needs an intent is then denied).
		_, fs, err := ReadIntents(p.Intents.File)
		if err != nil {
			findings = append(findings, Finding{Pos: p.Intents.Pos, Severity: SevError, Field: "intents.file", Message: err.Error()})
		}
		findings = append(findings, fs...)
	}
	return p, findings
}

// Parse decodes and validates a policy from data; file is its absolute path
// (used for positions, the workspace root and the protected policy file).
func Parse(file string, data []byte) (*Policy, []Finding) {
	d := &decoder{file: file}
	p := &Policy{File: file, Dir: filepath.Dir(file), Digest: sha256.Sum256(data)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.errAt(yamlErrPos(file, err), "", "%s", yamlErrMsg(err))
		return p, d.findings
	}
	if len(doc.Content) == 0 {
		d.errAt(Pos{File: file, Line: 1, Col: 1}, "", "the policy file is empty")
		return p, d.findings
	}
	d.policy(p, doc.Content[0])
	sort.SliceStable(d.findings, func(i, j int) bool {
		a, b := d.findings[i].Pos, d.findings[j].Pos
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	return p, d.findings
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrPos(file string, err error) Pos {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Pos{File: file, Line: n, Col: 1}
	}
	return Pos{File: file, Line: 1, Col: 1}
}

func yamlErrMsg(err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:\n  ")
}

type decoder struct {
	file     string
	findings []Finding
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) errAt(p Pos, field, format string, args ...any) {
	d.findings = append(d.findings, Finding{Pos: p, Severity: SevError, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (d *decoder) err(n *yaml.Node, field, format string, args ...any) {
	d.errAt(d.pos(n), field, format, args...)
}

func (d *decoder) warn(n *yaml.Node, field, format string, args ...any) {
	d.findings = append(d.findings, Finding{Pos: d.pos(n), Severity: SevWarning, Field: field, Message: fmt.Sprintf(format, args...)})
}

// field is one key of a mapping.
type field struct {
	key, val *yaml.Node
}

// mapping returns the keys of a mapping node; keys outside allowed are
// errors. It returns nil if n is not a mapping.
func (d *decoder) mapping(n *yaml.Node, path string, allowed ...string) map[string]field {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.err(n, path, "must be a mapping, not %s", kindName(n))
		return nil
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
			d.err(k, path, "merge keys (<<) are not supported")
			continue
		}
		name := k.Value
		if allowed != nil && !contains(allowed, name) {
			d.err(k, join(path, name), "unknown key %q (allowed: %s)", name, strings.Join(allowed, ", "))
			continue
		}
		// A key written twice: YAML keeps the last silently, so a
		// `default: allow` added below the real one would win.
		if first, ok := out[name]; ok {
			d.err(k, join(path, name), "duplicate key %q (first at line %d): remove one", name, first.key.Line)
			continue
		}
		out[name] = field{key: k, val: v}
	}
	return out
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return resolve(n.Content[0])
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str decodes a string scalar.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.err(n, path, "must be a string, not %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// strs decodes a string or a list of strings.
func (d *decoder) strs(n *yaml.Node, path string) []string {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		d.err(n, path, "must be a string or a list of strings, not %s", kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		if s, ok := d.str(c, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		d.err(n, path, "must not be an empty list")
	}
	return out
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, bool) {
	n = resolve(n)
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		d.err(n, path, "must be a whole number, not %s", kindName(n))
		return 0, false
	}
	if v < min {
		d.err(n, path, "must be at least %d", min)
		return 0, false
	}
	return v, true
}

// boolean decodes true or false.
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	d.err(n, path, "must be true or false, not %s", kindName(n))
	return false, false
}

// duration decodes a Go duration, with "d" for days accepted ("7d").
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.err(n, path, "%v", err)
		return 0, false
	}
	return v, true
}

// ParseDuration parses a Go duration ("90m", "48h") or a number of days
// ("7d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration (use 90m, 48h or 7d)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a duration (use 90m, 48h or 7d)", s)
	}
	return v, nil
}

func (d *decoder) effect(n *yaml.Node, path string, allowed ...string) (warden.Effect, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	if !contains(allowed, s) {
		d.err(n, path, "%q is not one of %s", s, strings.Join(allowed, ", "))
		return "", false
	}
	return warden.Effect(s), true
}

// seal checks a sealed policy (sealed: true as its first key): it must end
// with end: true as its last key, or it may be a file cut short (an editor
// that crashed while writing it, a copy that stopped) and is refused. A
// cut policy loses the rules, private paths and denies written after the
// cut, and decides more permissively than the whole file; sealed, every
// cut but the whole file fails to load.
func (d *decoder) seal(root *yaml.Node, m map[string]field) {
	top := resolve(root)
	if len(top.Content) < 2 {
		return // {}: neither key
	}
	first, last := top.Content[0], top.Content[len(top.Content)-2]
	if f, ok := m["sealed"]; ok {
		if b, ok := d.boolean(f.val, "sealed"); ok && b {
			if f.key != first {
				d.err(f.key, "sealed", "sealed: true must be the policy's first key (a file cut before it would load unsealed): move it to the top")
			}
			if e, ok := m["end"]; !ok || e.key != last {
				d.err(f.key, "sealed", "this policy is sealed but does not end with end: true: it may be cut short (an editor that crashed, a copy that stopped), and warden does not decide with part of a policy; restore the whole file, or add end: true as its last line")
			}
		}
	}
	if f, ok := m["end"]; ok {
		if b, ok := d.boolean(f.val, "end"); ok && !b {
			d.err(f.val, "end", "end must be true (it marks the end of a sealed policy)")
		}
		if f.key != last {
			d.err(f.key, "end", "end: true must be the policy's last key (it marks where a sealed policy ends)")
		}
	}
}

// Kinds are the tool kinds of docs/policy.md ("Tool kinds and classes").
var Kinds = []string{"shell", "read", "write", "edit", "delete", "list", "fetch", "delegate", "todo", "intent", "other"}

// IsKind reports whether s is a tool kind.
func IsKind(s string) bool { return contains(Kinds, s) }

func (d *decoder) policy(p *Policy, root *yaml.Node) {
	m := d.mapping(root, "", "version", "mode", "default", "workspace", "protected", "private", "tools", "roles",
		"rules", "intents", "state", "audit", "approvals", "tests", "compiled", "model_errors", "report", "sandbox", "sealed", "end", "governance")
	if m == nil {
		return
	}
	d.seal(root, m)
	// Defaults.
	p.Version = 1
	p.Mode = "enforce"
	p.Default = Default{Safe: warden.Allow, Destructive: warden.Ask}
	p.Workspace = Workspace{Root: p.Dir, Outside: warden.Deny}
	p.State = State{AnchorsMax: 20, AnchorDemoteAfter: 48 * time.Hour, HistoryMax: 50, SessionMaxAge: 7 * 24 * time.Hour}
	p.Approvals = Approvals{Timeout: 5 * time.Minute, Expires: DefaultApprovalExpiry, Notify: Notify{Desktop: true}}
	p.Tools = map[string]string{}
	p.Roles = map[string]*Role{}

	if f, ok := m["version"]; ok {
		if v, ok := d.integer(f.val, "version", 0); ok {
			if v != 1 {
				d.err(f.val, "version", "unsupported version %d (this warden reads version 1)", v)
			}
			p.Version = v
		}
	} else {
		d.warn(root, "version", "no version given; assuming version: 1")
	}
	if f, ok := m["mode"]; ok {
		if s, ok := d.str(f.val, "mode"); ok {
			if s != "enforce" && s != "audit" {
				d.err(f.val, "mode", "%q is not one of enforce, audit", s)
			}
			p.Mode = s
		}
	}
	if f, ok := m["default"]; ok {
		d.defaults(p, f.val)
	}
	if f, ok := m["workspace"]; ok {
		wm := d.mapping(f.val, "workspace", "root", "outside")
		if r, ok := wm["root"]; ok {
			if s, ok := d.str(r.val, "workspace.root"); ok {
				s = expandHome(s)
				if !filepath.IsAbs(s) {
					s = filepath.Join(p.Dir, s)
				}
				p.Workspace.Root = filepath.Clean(s)
				if st, err := os.Stat(p.Workspace.Root); err != nil || !st.IsDir() {
					d.err(r.val, "workspace.root", "%s is not a folder", p.Workspace.Root)
				}
			}
		}
		if o, ok := wm["outside"]; ok {
			if e, ok := d.effect(o.val, "workspace.outside", "allow", "ask", "deny"); ok {
				p.Workspace.Outside = e
			}
		}
	}
	if f, ok := m["protected"]; ok {
		pats := d.strs(f.val, "protected")
		for i, s := range pats {
			if _, err := glob.CompilePath(strings.TrimPrefix(s, "!")); err != nil {
				d.err(itemNode(f.val, i), fmt.Sprintf("protected[%d]", i), "%v", err)
			}
			if strings.HasPrefix(s, "!") {
				d.err(itemNode(f.val, i), fmt.Sprintf("protected[%d]", i), "exclusions (!) are not allowed in protected: a protected path cannot be unprotected")
			}
		}
		p.Protected = pats
	}
	if f, ok := m["private"]; ok {
		pats := d.strs(f.val, "private")
		for i, s := range pats {
			if _, err := glob.CompilePath(strings.TrimPrefix(s, "!")); err != nil {
				d.err(itemNode(f.val, i), fmt.Sprintf("private[%d]", i), "%v", err)
			}
			if strings.HasPrefix(s, "!") {
				d.err(itemNode(f.val, i), fmt.Sprintf("private[%d]", i), "exclusions (!) are not allowed in private: a private path cannot be made readable")
			}
		}
		p.Private = pats
	}
	if f, ok := m["tools"]; ok {
		tm := d.mapping(f.val, "tools")
		for name, tf := range tm {
			if k, ok := d.str(tf.val, "tools."+name); ok {
				if !IsKind(k) {
					d.err(tf.val, "tools."+name, "%q is not a tool kind (one of %s)", k, strings.Join(Kinds, ", "))
				}
				p.Tools[name] = k
			}
		}
	}
	if f, ok := m["roles"]; ok {
		d.roles(p, f.val)
	}
	if f, ok := m["rules"]; ok {
		d.rules(p, f.val)
	}
	if f, ok := m["intents"]; ok {
		d.intents(p, f.val)
	}
	if f, ok := m["state"]; ok {
		sm := d.mapping(f.val, "state", "anchors_max", "anchor_demote_after", "history_max", "session_max_age")
		if v, ok := sm["anchors_max"]; ok {
			p.State.AnchorsMax, _ = d.integer(v.val, "state.anchors_max", 1)
		}
		if v, ok := sm["history_max"]; ok {
			p.State.HistoryMax, _ = d.integer(v.val, "state.history_max", 1)
		}
		if v, ok := sm["anchor_demote_after"]; ok {
			p.State.AnchorDemoteAfter, _ = d.duration(v.val, "state.anchor_demote_after")
		}
		if v, ok := sm["session_max_age"]; ok {
			p.State.SessionMaxAge, _ = d.duration(v.val, "state.session_max_age")
		}
	}
	if f, ok := m["audit"]; ok {
		am := d.mapping(f.val, "audit", "retention")
		if v, ok := am["retention"]; ok {
			p.Audit.Retention, _ = d.duration(v.val, "audit.retention")
		}
	}
	if f, ok := m["approvals"]; ok {
		am := d.mapping(f.val, "approvals", "timeout", "expires", "notify")
		if v, ok := am["timeout"]; ok {
			p.Approvals.Timeout, _ = d.duration(v.val, "approvals.timeout")
		}
		if v, ok := am["expires"]; ok {
			if e, ok := d.duration(v.val, "approvals.expires"); ok {
				if e <= 0 {
					d.err(v.val, "approvals.expires", "want a positive duration such as 1h or 7d")
				} else {
					p.Approvals.Expires = e
				}
			}
		}
		if v, ok := am["notify"]; ok {
			d.notify(p, v.val)
		}
	}
	if f, ok := m["tests"]; ok {
		p.Tests = d.cases(f.val, "tests")
	}
	if f, ok := m["compiled"]; ok {
		p.Compiled = d.compiled(p, f.val)
	}
	if f, ok := m["model_errors"]; ok {
		d.modelErrors(p, f.val)
	}
	if f, ok := m["report"]; ok {
		d.report(p, f.val)
	}
	if f, ok := m["sandbox"]; ok {
		d.sandbox(p, f.val)
	}
	if f, ok := m["governance"]; ok {
		d.governance(p, f.val) // after workspace and private: its files are checked against them
	}
	if p.Default.Confined != "" && !p.Sandbox.Confine() {
		d.findings = append(d.findings, Finding{Pos: p.Default.Pos, Severity: SevWarning, Field: "default.confined",
			Message: "default.confined applies only to commands that run confined; without sandbox.shell: on (or required) those commands take default.destructive"})
	}
	// Role names that differ only in case or white space: a call naming
	// one of them is easily taken for the other.
	byFold := map[string]*Role{}
	names := make([]string, 0, len(p.Roles))
	for n := range p.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := p.Roles[n]
		k := strings.ToLower(strings.TrimSpace(n))
		if o := byFold[k]; o != nil {
			d.findings = append(d.findings, Finding{Pos: r.Pos, Severity: SevWarning, Field: "roles." + n,
				Message: fmt.Sprintf("role %q differs from role %q only in case or spaces; calls naming the wrong spelling are denied every tool", n, o.Name)})
		} else {
			byFold[k] = r
		}
		if n != strings.TrimSpace(n) {
			d.findings = append(d.findings, Finding{Pos: r.Pos, Severity: SevWarning, Field: "roles." + n,
				Message: fmt.Sprintf("role %q has leading or trailing spaces", n)})
		}
	}
	// Role references in delegates.
	for _, n := range names {
		r := p.Roles[n]
		for _, to := range r.Delegates {
			if _, ok := p.Roles[to]; !ok {
				d.warnAt(r.delegatesPos, "roles."+n+".delegates", "role %q is not defined under roles", to)
			}
		}
	}
	// Role references in rules.
	for i, r := range p.Rules {
		for _, role := range r.Roles {
			role = strings.TrimPrefix(role, "!")
			if _, ok := p.Roles[role]; !ok && len(p.Roles) > 0 {
				d.findings = append(d.findings, Finding{Pos: r.FieldPos["roles"], Severity: SevWarning,
					Field: fmt.Sprintf("rules[%d].roles", i), Message: fmt.Sprintf("role %q is not defined under roles", role)})
			}
		}
	}
}

func itemNode(n *yaml.Node, i int) *yaml.Node {
	n = resolve(n)
	if n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i]
	}
	return n
}

func expandHome(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, s[1:])
		}
	}
	return s
}

func (d *decoder) defaults(p *Policy, n *yaml.Node) {
	n = resolve(n)
	p.Default.Pos = d.pos(n)
	if n.Kind == yaml.ScalarNode {
		if e, ok := d.effect(n, "default", "allow", "ask", "deny"); ok {
			p.Default.Safe, p.Default.Destructive = e, e
		}
		return
	}
	m := d.mapping(n, "default", "safe", "destructive", "confined")
	if f, ok := m["confined"]; ok {
		if e, ok := d.effect(f.val, "default.confined", "allow", "ask", "deny"); ok {
			p.Default.Confined = e
		}
	}
	if f, ok := m["safe"]; ok {
		if e, ok := d.effect(f.val, "default.safe", "allow", "ask", "deny"); ok {
			p.Default.Safe = e
		}
	}
	if f, ok := m["destructive"]; ok {
		if e, ok := d.effect(f.val, "default.destructive", "allow", "ask", "deny"); ok {
			p.Default.Destructive = e
		}
	}
}

func (d *decoder) roles(p *Policy, n *yaml.Node) {
	m := d.mapping(n, "roles")
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	var defaultAt *yaml.Node
	for _, name := range names {
		f := m[name]
		path := "roles." + name
		if name == "default" && resolve(f.val).Kind == yaml.ScalarNode {
			// roles.default: NAME names the role of a session without one
			// (a mapping under default is a role called default).
			if s, ok := d.str(f.val, path); ok {
				p.DefaultRole, defaultAt = s, f.val
			}
			continue
		}
		r := &Role{Name: name, FirstEnforce: "warn", Pos: d.pos(f.key)}
		rm := d.mapping(f.val, path, "description", "tools", "first", "first_enforce", "max_depth", "delegates", "prompt", "reminder")
		if v, ok := rm["description"]; ok {
			r.Description, _ = d.str(v.val, path+".description")
		}
		if v, ok := rm["tools"]; ok {
			r.Tools = d.strs(v.val, path+".tools")
			d.lintToolNames(p, v.val, path+".tools", r.Tools)
		}
		if v, ok := rm["first"]; ok {
			r.First = d.strs(v.val, path+".first")
		}
		if v, ok := rm["first_enforce"]; ok {
			if s, ok := d.str(v.val, path+".first_enforce"); ok {
				if s != "warn" && s != "deny" {
					d.err(v.val, path+".first_enforce", "%q is not one of warn, deny", s)
				}
				r.FirstEnforce = s
			}
		}
		if v, ok := rm["max_depth"]; ok {
			r.MaxDepth, _ = d.integer(v.val, path+".max_depth", 0)
		}
		if v, ok := rm["delegates"]; ok {
			r.Delegates = d.strs(v.val, path+".delegates")
			r.delegatesPos = d.pos(v.val)
		}
		for _, k := range []string{"prompt", "reminder"} {
			v, ok := rm[k]
			if !ok {
				continue
			}
			s, ok := d.str(v.val, path+"."+k)
			if !ok {
				continue
			}
			if _, err := template.New(k).Funcs(TemplateFuncs).Parse(s); err != nil {
				d.err(v.val, path+"."+k, "not a valid Go template: %v", err)
			}
			if k == "prompt" {
				r.Prompt = s
			} else {
				r.Reminder = s
			}
		}
		p.Roles[name] = r
	}
	if defaultAt != nil && p.Roles[p.DefaultRole] == nil {
		known := make([]string, 0, len(p.Roles))
		for n := range p.Roles {
			known = append(known, n)
		}
		sort.Strings(known)
		d.err(defaultAt, "roles.default", "no role is named %q (the roles: %s)", p.DefaultRole, strings.Join(known, ", "))
	}
}

// after reads a rule's after: section (and, once, its since:).
func (d *decoder) after(p *Policy, n *yaml.Node, path string, top bool) *After {
	keys := []string{"tool", "command", "path", "same_path", "ok"}
	if top {
		keys = append(keys, "since")
	}
	m := d.mapping(n, path, keys...)
	if m == nil {
		return nil
	}
	a := &After{Pos: d.pos(n)}
	if f, ok := m["tool"]; ok {
		a.Tool = d.strs(f.val, path+".tool")
		d.lintToolNames(p, f.val, path+".tool", a.Tool)
	}
	if f, ok := m["command"]; ok {
		a.Command = d.strs(f.val, path+".command")
		for j, c := range a.Command {
			if _, err := shell.CompilePattern(c); err != nil {
				d.err(itemNode(f.val, j), path+".command", "%v", err)
			}
		}
	}
	if f, ok := m["path"]; ok {
		a.Path = d.strs(f.val, path+".path")
		for j, s := range a.Path {
			if _, err := glob.CompilePath(strings.TrimPrefix(s, "!")); err != nil {
				d.err(itemNode(f.val, j), path+".path", "%v", err)
			}
		}
	}
	if f, ok := m["same_path"]; ok {
		a.SamePath, _ = d.boolean(f.val, path+".same_path")
	}
	if f, ok := m["ok"]; ok {
		if v, ok := d.boolean(f.val, path+".ok"); ok {
			if !v {
				d.err(f.val, path+".ok", "only ok: true is supported (the earlier call must have succeeded); leave ok out to accept any outcome")
			}
			a.OK = v
		}
	}
	if f, ok := m["since"]; ok {
		a.Since = d.after(p, f.val, path+".since", false)
	}
	if len(a.Tool) == 0 && len(a.Command) == 0 && len(a.Path) == 0 && !a.SamePath {
		d.err(n, path, "names no earlier call: give tool, command, path or same_path")
	}
	return a
}

// window reads {count: N, within: DURATION}, and for repeat: also
// {failures: N} (within optional there).
func (d *decoder) window(n *yaml.Node, path string, failures bool) *Window {
	keys := []string{"count", "within"}
	if failures {
		keys = append(keys, "failures")
	}
	m := d.mapping(n, path, keys...)
	if m == nil {
		return nil
	}
	w := &Window{Pos: d.pos(n)}
	_, hasCount := m["count"]
	if f, ok := m["failures"]; ok {
		if hasCount {
			d.err(n, path, "gives both count and failures: use one rule for each")
		}
		if v, ok := d.integer(f.val, path+".failures", 1); ok {
			w.Failures = v
		}
	} else if f, ok := m["count"]; ok {
		if v, ok := d.integer(f.val, path+".count", 1); ok {
			w.Count = v
		}
	} else if failures {
		d.err(n, path, "needs a count (with within) or failures")
	} else {
		d.err(n, path, "needs a count")
	}
	if f, ok := m["within"]; ok {
		if v, ok := d.duration(f.val, path+".within"); ok {
			w.Within = v
		}
	} else if w.Failures == 0 {
		d.err(n, path, "needs within (a duration such as 10m)")
	}
	return w
}

// ruleKeys are the keys a rule may have.
var ruleKeys = []string{"id", "effect", "tool", "command", "path", "args", "intent", "roles", "message", "suggestion", "source", "after", "repeat", "rate"}

func (d *decoder) rules(p *Policy, n *yaml.Node) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.err(n, "rules", "must be a list of rules, not %s", kindName(n))
		return
	}
	seen := map[string]Pos{}
	for i, rn := range n.Content {
		path := fmt.Sprintf("rules[%d]", i)
		m := d.mapping(rn, path, ruleKeys...)
		if m == nil {
			continue
		}
		r := &Rule{Pos: d.pos(rn), FieldPos: map[string]Pos{}}
		for k, f := range m {
			r.FieldPos[k] = d.pos(f.val)
		}
		if f, ok := m["id"]; ok {
			r.ID, _ = d.str(f.val, path+".id")
			if prev, dup := seen[r.ID]; dup && r.ID != "" {
				d.err(f.val, path+".id", "duplicate rule id %q (first used at %s)", r.ID, prev)
			}
			seen[r.ID] = d.pos(f.val)
			if strings.HasPrefix(r.ID, "grant:") {
				d.err(f.val, path+".id", "rule ids must not start with \"grant:\" (reserved for grants)")
			}
		} else {
			d.err(rn, path, "a rule needs an id")
		}
		if r.ID != "" {
			path = fmt.Sprintf("rules[%d] (%s)", i, r.ID)
		}
		if f, ok := m["effect"]; ok {
			if e, ok := d.effect(f.val, path+".effect", "allow", "ask", "deny", "warn"); ok {
				r.Effect = string(e)
			}
		} else {
			d.err(rn, path, "a rule needs an effect (allow, ask, deny or warn)")
		}
		if f, ok := m["tool"]; ok {
			r.Tool = d.strs(f.val, path+".tool")
			d.lintToolNames(p, f.val, path+".tool", r.Tool)
			for j, t := range r.Tool {
				if len(t) > 1 && t[0] == '/' && t[len(t)-1] == '/' {
					if _, err := regexp.Compile(t[1 : len(t)-1]); err != nil {
						d.err(itemNode(f.val, j), path+".tool", "bad regular expression %s: %v", t, err)
					}
				}
			}
		}
		if f, ok := m["command"]; ok {
			r.Command = d.strs(f.val, path+".command")
			for j, c := range r.Command {
				if _, err := shell.CompilePattern(c); err != nil {
					d.err(itemNode(f.val, j), path+".command", "%v", err)
				}
			}
			if len(r.Tool) > 0 && !d.toolCanShell(p, r.Tool) {
				d.err(f.key, path+".command", "command patterns apply only to shell tools, but tool is %s", strings.Join(r.Tool, ", "))
			}
		}
		if f, ok := m["path"]; ok {
			r.Path = d.strs(f.val, path+".path")
			incl := 0
			for j, s := range r.Path {
				if !strings.HasPrefix(s, "!") {
					incl++
				}
				if _, err := glob.CompilePath(strings.TrimPrefix(s, "!")); err != nil {
					d.err(itemNode(f.val, j), path+".path", "%v", err)
				}
			}
			if incl == 0 && len(r.Path) > 0 {
				d.warn(f.val, path+".path", "only exclusions: the rule matches every path except these")
			}
		}
		if f, ok := m["args"]; ok {
			am := d.mapping(f.val, path+".args")
			r.Args = map[string]string{}
			for k, v := range am {
				if s, ok := d.str(v.val, path+".args."+k); ok {
					r.Args[k] = s
				}
			}
		}
		if f, ok := m["intent"]; ok {
			if s, ok := d.str(f.val, path+".intent"); ok {
				if _, err := regexp.Compile(s); err != nil {
					d.err(f.val, path+".intent", "bad regular expression: %v", err)
				}
				r.Intent = s
			}
		}
		if f, ok := m["roles"]; ok {
			r.Roles = d.strs(f.val, path+".roles")
		}
		if f, ok := m["message"]; ok {
			r.Message, _ = d.str(f.val, path+".message")
		}
		if f, ok := m["suggestion"]; ok {
			r.Suggestion, _ = d.str(f.val, path+".suggestion")
		}
		if f, ok := m["source"]; ok {
			r.Source = d.source(f.val, path+".source")
		}
		if f, ok := m["after"]; ok {
			r.After = d.after(p, f.val, path+".after", true)
		}
		if f, ok := m["repeat"]; ok {
			r.Repeat = d.window(f.val, path+".repeat", true)
		}
		if f, ok := m["rate"]; ok {
			r.Rate = d.window(f.val, path+".rate", false)
		}
		d.lintRule(r, rn, path)
		d.lintToolOnly(p, r, m, rn, path)
		d.lintRuleScope(p, r, rn, path)
		p.Rules = append(p.Rules, r)
	}
}

// lintToolOnly refuses an allow or warn rule that names a shell or file
// tool and nothing else to match (no command, path, args or intent): it
// would allow every shell line or every path, and it is what a policy file
// cut short just after a rule's tool line looks like (tool: shell, then
// the command patterns that never came). Every call on purpose is written
// out: command: "*", path: "**", or args: {} (a mapping, even empty).
func (d *decoder) lintToolOnly(p *Policy, r *Rule, m map[string]field, n *yaml.Node, path string) {
	if r.Effect != "allow" && r.Effect != "warn" || len(r.Tool) == 0 ||
		len(r.Command) > 0 || len(r.Path) > 0 || len(r.Args) > 0 || r.Intent != "" {
		return
	}
	if f, ok := m["args"]; ok && resolve(f.val).Kind == yaml.MappingNode {
		return // args: {} - every call of the tool, on purpose
	}
	var what string
	switch {
	case d.toolIsShell(p, r.Tool):
		what = `command: "*" to allow every shell line on purpose`
	case d.toolHasPaths(r.Tool):
		what = `path: "**" to allow every path, or args: {} to allow every call of it (with or without a path) on purpose`
	default:
		// Another tool (an MCP server's, todo, delegate): a tool-wide
		// allow is how such tools are allowed.
		return
	}
	d.err(n, path, "this %s rule names a tool (%s) but no command, path, args or intent, so it would allow every call of it (a policy file cut short after its tool line looks like this): add what to allow, or write %s", r.Effect, strings.Join(r.Tool, ", "), what)
}

// toolIsShell reports whether any of the tools is named as a shell tool
// (the kind, a host's shell tool, or one the policy maps to shell).
func (d *decoder) toolIsShell(p *Policy, tools []string) bool {
	for _, t := range tools {
		if t == "shell" || p.Tools[t] == "shell" || BuiltinKinds[t] == "shell" {
			return true
		}
	}
	return false
}

// toolHasPaths reports whether any of the tools is a file tool (read,
// write, edit, delete, list) whose paths warden knows where to find.
func (d *decoder) toolHasPaths(tools []string) bool {
	for _, t := range tools {
		k := t
		if bk, ok := BuiltinKinds[t]; ok {
			k = bk
		}
		switch k {
		case "read", "write", "edit", "delete", "list":
			return true
		}
	}
	return false
}

// toolCanShell reports whether any of a rule's tool matchers can name a
// shell tool.
func (d *decoder) toolCanShell(p *Policy, tools []string) bool {
	for _, t := range tools {
		if t == "shell" || strings.ContainsAny(t, "*?/") {
			return true
		}
		if k, ok := p.Tools[t]; ok && k == "shell" {
			return true
		}
		if k, ok := BuiltinKinds[t]; ok && k == "shell" {
			return true
		}
		if !IsKind(t) {
			if _, known := BuiltinKinds[t]; !known {
				return true // an unknown tool name: it may be a shell
			}
		}
	}
	return false
}

// lintRule applies the lint rules of docs/policy.md to one rule.
func (d *decoder) lintRule(r *Rule, n *yaml.Node, path string) {
	if (r.Effect == "deny" || r.Effect == "warn") && strings.TrimSpace(r.Message) == "" {
		d.err(n, path, "a %s rule needs a message saying why (every deny says why, so the model can do something else)", r.Effect)
	}
	if r.Effect == "deny" && strings.TrimSpace(r.Suggestion) == "" {
		d.err(n, path, "a deny rule needs a suggestion saying what to do instead")
	}
	if len(r.Tool) == 0 && len(r.Command) == 0 && len(r.Path) == 0 && len(r.Args) == 0 && r.Intent == "" {
		// A rule with no matcher matches every call. For an allow that is
		// almost never meant, and it is what a policy file cut short
		// after "effect: allow" looks like.
		switch {
		case r.Effect == "allow" || r.Effect == "warn":
			d.err(n, path, "this %s rule has no matcher (tool, command, path, args or intent), so it would allow every call: add one, or write tool: \"*\" with args: {} to allow every call on purpose", r.Effect)
		case r.Effect != "" && (r.Effect != "deny" || len(r.Roles) > 0):
			d.warn(n, path, "this %s rule has no matcher (tool, command, path, args or intent), so it matches every call", r.Effect)
		}
	}
	if r.Effect == "allow" || r.Effect == "warn" {
		// An allow is only as wide as warden's knowledge of the program.
		seen := map[string]bool{}
		for _, c := range r.Command {
			p, err := shell.CompilePattern(c)
			if err != nil || !p.Open() {
				continue // an exact command allows exactly its options
			}
			for _, prog := range p.Progs() {
				if seen[prog] || prog == "*" || strings.ContainsAny(prog, "*?[") || shell.Known(prog) {
					continue
				}
				seen[prog] = true
				d.warn(n, path, "warden has no table of %s's options, so this allow trusts every option of %s as written (one that runs another program or writes a file would be allowed too); allow exact commands (without a trailing *), or leave %s to the default", prog, prog, prog)
			}
		}
	}
	if r.Effect == "deny" {
		broad := len(r.Command) == 0 && len(r.Path) == 0 && len(r.Args) == 0 && r.Intent == "" && len(r.Roles) == 0
		if broad && (len(r.Tool) == 0 || len(r.Tool) == 1 && r.Tool[0] == "*") {
			d.warn(n, path, "this deny matches every call (a bare *): deny specific commands, paths or tools, and use default for the rest")
		}
		for _, c := range r.Command {
			if strings.TrimSpace(c) == "*" {
				d.warn(n, path, "this deny matches every command (a bare *): deny specific commands instead")
			}
		}
		for _, s := range r.Path {
			if s == "*" || s == "**" {
				d.warn(n, path, "this deny matches every path (a bare %s): deny specific paths instead", s)
			}
		}
	}
}

// source decodes the plain-language sentence of a compiled rule or case.
func (d *decoder) source(n *yaml.Node, path string) string {
	s, ok := d.str(n, path)
	if ok && strings.TrimSpace(s) == "" {
		d.err(n, path, "must not be empty (it is the plain-language rule this was compiled from)")
	}
	return s
}

var hashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// compiled decodes the `compiled:` section `warden compile` writes.
func (d *decoder) compiled(p *Policy, n *yaml.Node) *Compiled {
	m := d.mapping(n, "compiled", "from", "sources", "rules", "model")
	if m == nil {
		return nil
	}
	c := &Compiled{Pos: d.pos(resolve(n))}
	if f, ok := m["from"]; ok {
		if s, ok := d.str(f.val, "compiled.from"); ok {
			s = expandHome(s)
			if !filepath.IsAbs(s) {
				s = filepath.Join(p.Dir, s)
			}
			c.From = filepath.Clean(s)
		}
	} else {
		d.err(resolve(n), "compiled", "needs from (the plain-language rules file)")
	}
	for _, k := range []string{"sources", "rules"} {
		f, ok := m[k]
		if !ok {
			d.err(resolve(n), "compiled", "needs %s (a sha256: hash written by warden compile)", k)
			continue
		}
		s, ok := d.str(f.val, "compiled."+k)
		if ok && !hashRE.MatchString(s) {
			d.err(f.val, "compiled."+k, "%q is not a hash of the form sha256:<64 hex digits>", s)
		}
		if k == "sources" {
			c.Sources = s
		} else {
			c.Rules = s
		}
	}
	if f, ok := m["model"]; ok {
		c.Model, _ = d.str(f.val, "compiled.model")
	}
	return c
}

func (d *decoder) intents(p *Policy, n *yaml.Node) {
	m := d.mapping(n, "intents", "file", "require", "out_of_scope")
	if m == nil {
		return
	}
	in := &Intents{File: filepath.Join(p.Dir, ".orchestration", "active_intents.yaml"), OutOfScope: warden.Ask, Pos: d.pos(resolve(n))}
	if f, ok := m["file"]; ok {
		if s, ok := d.str(f.val, "intents.file"); ok {
			s = expandHome(s)
			if !filepath.IsAbs(s) {
				s = filepath.Join(p.Dir, s)
			}
			in.File = filepath.Clean(s)
		}
	}
	if f, ok := m["require"]; ok {
		in.Require = d.strs(f.val, "intents.require")
		for j, k := range in.Require {
			if !IsKind(k) {
				d.err(itemNode(f.val, j), "intents.require", "%q is not a tool kind (one of %s)", k, strings.Join(Kinds, ", "))
			}
		}
	}
	if f, ok := m["out_of_scope"]; ok {
		if e, ok := d.effect(f.val, "intents.out_of_scope", "ask", "deny"); ok {
			in.OutOfScope = e
		}
	}
	p.Intents = in
}

// cases decodes policy test cases.
func (d *decoder) cases(n *yaml.Node, path string) []*Case {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.err(n, path, "must be a list of test cases, not %s", kindName(n))
		return nil
	}
	var out []*Case
	for i, cn := range n.Content {
		cp := fmt.Sprintf("%s[%d]", path, i)
		if path == "" {
			cp = fmt.Sprintf("[%d]", i)
		}
		m := d.mapping(cn, cp, "name", "call", "expect", "code", "rule", "source", "history")
		if m == nil {
			continue
		}
		c := &Case{Pos: d.pos(cn), Name: fmt.Sprintf("case %d", i+1)}
		if f, ok := m["name"]; ok {
			c.Name, _ = d.str(f.val, cp+".name")
		}
		if f, ok := m["call"]; ok {
			call, err := decodeCall(f.val)
			if err != nil {
				d.err(f.val, cp+".call", "%v", err)
			}
			c.Call = call
		} else {
			d.err(cn, cp, "a test case needs a call")
		}
		if f, ok := m["history"]; ok {
			// The calls the session made before, oldest first (allowed,
			// a minute apart), for sequence rules.
			hn := resolve(f.val)
			if hn.Kind != yaml.SequenceNode {
				d.err(f.val, cp+".history", "must be a list of calls, not %s", kindName(hn))
			} else {
				for j, x := range hn.Content {
					hp := fmt.Sprintf("%s.history[%d]", cp, j)
					x, outcome := d.outcome(x, hp)
					call, err := decodeCall(x)
					if err != nil {
						d.err(x, hp, "%v", err)
					}
					c.History = append(c.History, call)
					c.Outcomes = append(c.Outcomes, outcome)
				}
			}
		}
		if f, ok := m["expect"]; ok {
			c.Expect, _ = d.effect(f.val, cp+".expect", "allow", "ask", "deny")
		} else {
			d.err(cn, cp, "a test case needs expect (allow, ask or deny)")
		}
		if f, ok := m["code"]; ok {
			if s, ok := d.str(f.val, cp+".code"); ok {
				if !knownCode(s) {
					d.err(f.val, cp+".code", "%q is not a decision code", s)
				}
				c.Code = warden.Code(s)
			}
		}
		if f, ok := m["rule"]; ok {
			c.Rule, _ = d.str(f.val, cp+".rule")
		}
		if f, ok := m["source"]; ok {
			c.Source = d.source(f.val, cp+".source")
		}
		out = append(out, c)
	}
	return out
}

// outcome takes a history call's `outcome: ok|fail` (what the call did,
// for after.ok and repeat.failures) off the call and returns both.
func (d *decoder) outcome(n *yaml.Node, path string) (*yaml.Node, string) {
	r := resolve(n)
	if r.Kind != yaml.MappingNode {
		return n, ""
	}
	for i := 0; i+1 < len(r.Content); i += 2 {
		if r.Content[i].Value != "outcome" {
			continue
		}
		v, ok := d.str(r.Content[i+1], path+".outcome")
		if ok && v != warden.OutcomeOK && v != warden.OutcomeFail {
			d.err(r.Content[i+1], path+".outcome", "%q is not an outcome (ok or fail; leave it out for unknown)", v)
			v = ""
		}
		c := *r
		c.Content = append(append([]*yaml.Node{}, r.Content[:i]...), r.Content[i+2:]...)
		return &c, v
	}
	return n, ""
}

// Codes lists every decision code.
var Codes = []warden.Code{warden.CodeAllowed, warden.CodeRuleDeny, warden.CodeRuleAsk, warden.CodeDefault,
	warden.CodeProtectedPath, warden.CodeOutsideWorkspace, warden.CodeRoleToolDenied, warden.CodeFirstTool,
	warden.CodeDepthExceeded, warden.CodeMissingIntent, warden.CodeIntentNotFound, warden.CodeScopeViolation,
	warden.CodeUnparsable, warden.CodeApprovalRejected, warden.CodeApprovalTimeout, warden.CodePolicyError, warden.CodeUnknownTarget, warden.CodeHalted, warden.CodeRoleUnknown}

func knownCode(s string) bool {
	for _, c := range Codes {
		if string(c) == s {
			return true
		}
	}
	return false
}

// decodeCall turns a YAML node into a tool call, with the same checks as
// warden.ParseToolCall.
func decodeCall(n *yaml.Node) (warden.ToolCall, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return warden.ToolCall{}, err
	}
	data, err := jsonMarshal(v)
	if err != nil {
		return warden.ToolCall{}, err
	}
	return warden.ParseToolCall(data)
}

// LoadCases reads a file of policy test cases: a list of cases, or a
// mapping with a `tests:` list.
func LoadCases(path string) ([]*Case, []Finding, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cases %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("cases: %w", err)
	}
	d := &decoder{file: abs}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.errAt(yamlErrPos(abs, err), "", "%s", yamlErrMsg(err))
		return nil, d.findings, nil
	}
	if len(doc.Content) == 0 {
		d.errAt(Pos{File: abs, Line: 1, Col: 1}, "", "the file has no test cases")
		return nil, d.findings, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.MappingNode {
		m := d.mapping(root, "", "tests")
		f, ok := m["tests"]
		if !ok {
			d.err(root, "", "expected a list of test cases or a mapping with tests:")
			return nil, d.findings, nil
		}
		return d.cases(f.val, "tests"), d.findings, nil
	}
	return d.cases(root, ""), d.findings, nil
}

// envName is the NAME of an env:NAME value.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// notify decodes approvals.notify: {webhook, desktop, page}.
func (d *decoder) notify(p *Policy, n *yaml.Node) {
	m := d.mapping(n, "approvals.notify", "webhook", "desktop", "page")
	if v, ok := m["webhook"]; ok {
		if s, ok := d.str(v.val, "approvals.notify.webhook"); ok {
			if name, isEnv := strings.CutPrefix(s, "env:"); isEnv {
				if !envName.MatchString(name) {
					d.err(v.val, "approvals.notify.webhook", "env:%s is not a variable name (letters, digits and _)", name)
				}
			} else if !httpURL(s) {
				// The value may be a secret: the error does not repeat it.
				d.err(v.val, "approvals.notify.webhook", "want an http(s) URL, or env:NAME for the URL in the variable NAME")
			} else {
				d.warn(v.val, "approvals.notify.webhook", "a webhook's address is a secret: keep it out of the policy file with env:NAME")
			}
			p.Approvals.Notify.Webhook = s
		}
	}
	if v, ok := m["desktop"]; ok {
		if b, ok := d.boolean(v.val, "approvals.notify.desktop"); ok {
			p.Approvals.Notify.Desktop = b
		}
	}
	if v, ok := m["page"]; ok {
		if s, ok := d.str(v.val, "approvals.notify.page"); ok {
			if !httpURL(s) {
				d.err(v.val, "approvals.notify.page", "want the approvals page's http(s) address, such as http://127.0.0.1:7878/")
			}
			p.Approvals.Notify.Page = s
		}
	}
}

// httpURL reports whether s is an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
